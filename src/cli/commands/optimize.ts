import { backendChoices } from '../../backends/registry.js';
import type { Command } from 'commander';
import { DEFAULT_MAX_CANDIDATES, DEFAULT_STALL_AFTER } from '../../agent/run/optimize-defaults.js';
import { STALL_POLICIES } from '../../agent/search/state/stall-policies.js';
import { STRATEGY_NAMES } from '../../agent/search/state/strategy-names.js';
import { DEFAULT_GUARD_POLICY, guardPolicyHelp } from '../../core/guard-policies.js';
import { DEFAULT_STORE_PATH } from '../../store/sqlite/default-store-path.js';
import { addSuiteOptions } from '../flags/add-suite-options.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { LOG_FORMATS } from '../io/log-formats.js';
import { collectRepeated } from '../flags/repeated-option.js';
import { TIMEOUT_STAGES, timeoutDefaultHelp } from '../flags/timeout-stages.js';
import type { OptimizeCommandDependencies } from './optimize-action.js';

export { connectedWorkersBackend } from '../evaluator/connected-workers-backend.js';
export type { OptimizeCommandDependencies } from './optimize-action.js';

/**
 * Adds `kforge optimize PROBLEM_OR_DIR...`: searches each problem with the chosen strategy and
 * model, records everything in the store, writes the best kernel of each problem with its verdict
 * JSON, and prints the per-problem and total table (or, with `--json`, one JSON object). Exit
 * status 0 when the run finished or paused, 130 when it was stopped (resumable), 2 for misuse,
 * 3 when the run failed for a reason of kforge's or the machine's.
 *
 * Longer than convention 4's 60 lines: it is one commander declaration, the arguments and flags in the order
 * `kforge optimize --help` lists them, and splitting it would part a flag from its neighbours.
 */
export function registerOptimizeCommand(program: Command, dependencies: OptimizeCommandDependencies = {}): Command {
  const command = program
    .command('optimize')
    .description(COMMAND_DESCRIPTIONS.optimize)
    .argument('[problems...]', 'problem files (KernelBench format) or folders of them')
    .option('--provider <name>', 'model provider: openai, anthropic, google, openai-compatible, vllm, sglang, ollama, llamacpp, deepseek, openrouter, files')
    .option('--model <id>', 'model id as the provider names it')
    .option('--base-url <url>', 'API base URL (openai-compatible servers)')
    .option('--dir <dir>', "folder of candidate files or recorded replies (files provider); DIR/<problem stem>/ holds one problem's own")
    .option('--strategy <name>', `search strategy: ${STRATEGY_NAMES.join(', ')} (default refine)`)
    .option('--max-candidates <n>', `candidates per problem (default ${DEFAULT_MAX_CANDIDATES} when no other limit is given)`)
    .option('--max-minutes <m>', 'wall-clock minutes per problem')
    .option('--max-tokens <n>', 'tokens for the whole run')
    .option('--max-cost <usd>', 'US dollars for the whole run')
    .option('--max-gpu-seconds <s>', 'device seconds for the whole run')
    .option('--target-speedup <x>', 'stop a problem once a correct kernel is this much faster than the best baseline')
    .option('--concurrency <n>', 'model calls at once for this provider')
    .option('--backend <backend>', `${backendChoices()} (default: with --redis, what the connected workers serve; else cuda when a GPU is visible, else cpu)`)
    .option('--precision <precision>', "fp32, fp16, bf16 or native (the problem's own dtypes) (default fp32)")
    .option('--tolerance <profile>', 'kernelbench or strict (default kernelbench)')
    .option('--guard-policy <policy>', `guard policy of every evaluation: ${guardPolicyHelp()} (default ${DEFAULT_GUARD_POLICY}; see docs/guard.md)`)
    .option('--trials <n>', 'correctness trials per candidate (default 5)')
    .option('--perf-trials <n>', 'timed calls per candidate (default 100)')
    .option('--preset <preset>', 'problem sizes: cpu or gpu (default: by backend)')
    .option(
      '--set <[PROBLEM:]NAME=VALUE>',
      "replace a module constant of each problem that has it, e.g. batch_size=2 or N=512, or with PROBLEM: (its file name) of that one (repeatable; checked before the run, kept for --resume, recorded as each verdict's problem_overrides)",
      collectRepeated,
      [],
    )
    .option('--fit', 'evaluate each problem that does not fit this machine at its own sizes at sizes that do (said per problem; kept for --resume)')
    .option(
      '--eval-budget <duration>',
      'evaluate each problem at the largest halving of its batch at which one evaluation takes about this long on this machine, e.g. 60s (cpu backend; said per problem; kept for --resume)',
    )
    .option('--warmup <n>', 'untimed calls before timing (default 10)')
    .option('--warmup-ms <ms>', 'after those, warm up on until this much time has passed, so clocks settle (default: 1000 on a GPU, 0 on cpu)')
    .option('--device <index>', 'GPU index on multi-GPU hosts (default 0)')
    .option('--cache-dir <dir>', 'the cache folder: builds, baselines and bytecode (default: $KFORGE_CACHE_DIR, else .kforge); `kforge cache` reads the same')
    .option('--redis <url>', 'evaluate through the Redis queue of `kforge worker` processes instead of on this machine (docs/workers.md)')
    .option('--queue <name>', 'queue name with --redis (default kforge)')
    .option('--remote-slots <n>', 'evaluations at once with --redis (default: the devices of the connected workers)')
    .option('--stall-after <n>', `candidates without a better one before a problem is stalled (default ${DEFAULT_STALL_AFTER})`)
    .option('--on-stall <policy>', `on a stall: ${STALL_POLICIES.join(', ')} (default continue)`)
    .option('--switch-to <strategy>', 'the strategy a stalled problem switches to')
    .option('--store <path>', `the store database (default ${DEFAULT_STORE_PATH})`)
    .option('--out <dir>', "where each problem's best kernel and its verdict JSON are written (default kforge-out)")
    .option('--resume <run-id>', 'continue a stopped or killed run with its stored settings')
    .option('--config <path>', 'config file (default kforge.config.json when present)')
    .option('--dry-run', 'print what would run (problems, input sizes, estimated memory, audit findings) without calling a model or writing the store')
    .option('--json', 'print one JSON object { run_id, problems } and nothing else on stdout')
    .option('--log-format <format>', `log lines on stderr: ${LOG_FORMATS.join(' or ')} (default: text, or $KFORGE_LOG_FORMAT)`);
  addSuiteOptions(command);
  for (const stage of TIMEOUT_STAGES) {
    command.option(`--timeout-${stage} <seconds>`, `evaluator limit of the ${stage} stage (default ${timeoutDefaultHelp(stage)})`);
  }
  return command.action(async (problemArguments: string[], rawOptions: unknown) => {
    // Loaded only now: the agent, the store and the evaluator are for running, not for `--help`.
    const { optimizeAction } = await import('./optimize-action.js');
    await optimizeAction(problemArguments, rawOptions, dependencies);
  });
}
