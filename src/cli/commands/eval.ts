import { backendChoices } from '../../backends/registry.js';
import type { Command } from 'commander';
import { DEFAULT_GUARD_POLICY, guardPolicyHelp } from '../../core/guard-policies.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { LOG_FORMATS } from '../io/log-formats.js';
import { collectRepeated } from '../flags/repeated-option.js';
import { TIMEOUT_STAGES, timeoutDefaultHelp } from '../flags/timeout-stages.js';
import type { EvalCommandDependencies } from './eval-action.js';

export type { EvalCommandDependencies } from './eval-action.js';

/**
 * Adds `kforge eval PROBLEM CANDIDATE` (docs/spec.md section 6): exit 0 for `correct`, 1 for any other
 * verdict, 2 for misuse; with `--json`, stdout is exactly one JSON object.
 *
 * Longer than convention 4's 60 lines: it is one commander declaration, the arguments and flags in the order
 * `kforge eval --help` lists them, and splitting it would part a flag from its neighbours.
 */
export function registerEvalCommand(program: Command, dependencies: EvalCommandDependencies = {}): Command {
  const command = program
    .command('eval')
    .description(COMMAND_DESCRIPTIONS.eval)
    .argument(
      '<problem>',
      'problem file (KernelBench format: Model, get_inputs, get_init_inputs) or problem folder (reference.py, shapes.py, problem.yaml: every shape; docs/problems.md); or PROBLEM:CANDIDATE pairs, or folders of them (docs/batch.md)',
    )
    .argument('[candidates...]', 'candidate files defining class ModelNew (several: a batch, one JSON line each with --json)')
    .option('--backend <backend>', `${backendChoices()} (default: cuda when a GPU is visible, else cpu)`)
    .option('--precision <precision>', "fp32, fp16, bf16 (cast to that dtype) or native (the problem's own dtypes: fp8, bf16, fp16, packed) (default: fp32)")
    .option('--tolerance <profile>', 'kernelbench (atol=rtol=1e-2) or strict (default: kernelbench)')
    .option('--preset <preset>', 'problem size preset: cpu or gpu (default: cpu on the cpu backend, else gpu)')
    .option('--trials <n>', 'correctness trials, each with fresh inputs (default: 5)')
    .option('--perf-trials <n>', 'timed calls of the candidate and of each baseline (default: 100)')
    .option('--warmup <n>', 'untimed calls before timing (default: 10)')
    .option(
      '--warmup-ms <ms>',
      'after those, warm up on until this much time has passed, so clocks settle; at most a tenth of the timing budget (default: 1000 on a GPU, 0 on cpu)',
    )
    .option('--device <index>', 'GPU index on multi-GPU hosts (default: 0)')
    .option('--refresh-baselines', 're-time the eager and torch.compile baselines even when cached')
    .option('--no-timing', 'check correctness only')
    .option('--guard-policy <policy>', `guard policy: ${guardPolicyHelp()} (default ${DEFAULT_GUARD_POLICY}; see docs/guard.md)`)
    .option('--shapes', 'also check correctness at other problem sizes (twice and half the batch) and report it')
    .option('--shapes-gate', 'reject a candidate that fails at other problem sizes (implies --shapes)')
    .option('--cross-check', 'time the candidate a second way in the same worker (back-to-back events on cuda) and report the ratio')
    .option('--timing-budget <seconds>', 'host time the timing stage may take; slow candidates get fewer timed calls, never under 10 (default: 30)')
    .option('--cache-dir <dir>', 'the cache folder: builds, baselines and bytecode (default: $KFORGE_CACHE_DIR, else .kforge); `kforge cache` reads the same')
    .option('--json', 'print exactly one JSON object on stdout (progress stays on stderr); a batch prints one per line')
    .option('--log-format <format>', `log lines on stderr: ${LOG_FORMATS.join(' or ')} (default: text, or $KFORGE_LOG_FORMAT)`)
    .option(
      '--set <[PROBLEM:]NAME=VALUE>',
      'replace a module constant, e.g. batch_size=256 or N=512; in a batch, of each problem that has it, or with PROBLEM: (its file name) of that one (repeatable; recorded as problem_overrides)',
      collectRepeated,
      [],
    )
    .option('--shape <n>', "a problem folder's shape to evaluate alone: its 0-based index in shapes.py's SHAPES (default: every shape)")
    .option('--fit', 'when the problem does not fit this machine at its own sizes, evaluate it at sizes that do (recorded as problem_overrides)')
    .option(
      '--eval-budget <duration>',
      'evaluate at the largest halving of the batch at which one evaluation takes about this long on this machine, e.g. 60s, 5m (cpu backend; recorded as problem_overrides)',
    )
    .option('--wait <duration>', 'longest wait for room on the device, e.g. 90s, 10m, 1h (default: no limit)')
    .option('--kernelbench <path>', 'a KernelBench checkout: the problems of a KernelBench run folder (level_<L>_problem_<N>_sample_<S>_kernel.py)')
    .option('--retries <n>', 'batch: further attempts of a candidate the machine could not evaluate (default: 2)')
    .option(
      '--resume <file>',
      'keep each finished result in FILE (JSON lines, appended); run the same command again to evaluate only the candidates FILE holds no verdict for',
    );
  for (const stage of TIMEOUT_STAGES) {
    const what = stage === 'startup' ? 'limit on a worker starting up, and on any wait outside a stage' : `limit of the ${stage} stage`;
    command.option(`--timeout-${stage} <seconds>`, `${what} (default: ${timeoutDefaultHelp(stage)})`);
  }
  command.addHelpText(
    'after',
    '\nExit status: 0 correct, 1 any other verdict, 2 misuse or a machine that cannot evaluate (no verdict: what ran out and what to do\nare on stderr), 3 an internal error of kforge, 130 interrupted. A batch: 0 when every candidate is correct, 1 when every\ncandidate has a verdict and some are not correct, 2 when the machine could not evaluate some, 3 when kforge failed on some.',
  );
  command.action(async (problem: string, candidates: string[], rawOptions: unknown) => {
    // Loaded only now: the evaluator and everything it needs are for running, not for `--help`.
    const { evalAction } = await import('./eval-action.js');
    await evalAction(problem, candidates, rawOptions, dependencies);
  });
  return command;
}
