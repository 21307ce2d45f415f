import { DEFAULT_GUARD_POLICY, guardPolicyHelp } from '../../core/guard-policy.js';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { COMMAND_DESCRIPTIONS } from '../command-descriptions.js';
import picocolors from 'picocolors';
import type { Logger } from 'pino';
import { evaluationResultSchema, type Backend, type EvaluationResult } from '../../core/verdict.js';
import { EvaluationCancelledError } from '../../eval/evaluation-cancelled-error.js';
import type { EvaluateOptions, EvaluationRequest, Evaluator } from '../../eval/evaluator.js';
import { EvaluatorSetupError } from '../../eval/evaluator-setup-error.js';
import { isGpuVisible } from '../../eval/pipeline/gpu-detection.js';
import { DEFAULT_STAGE_TIMEOUTS_SECONDS } from '../../eval/run/stage-limits.js';
import { EXIT, resolveCliIo, type CliIo } from '../cli-io.js';
import { ON_DEMAND_SIZING } from '../create-worker-evaluator.js';
import { openEvaluator } from '../open-evaluator.js';
import { parseEvalOptions, timeoutsFrom, TIMEOUT_STAGES, type EvalOptions } from '../eval-options.js';
import { renderEvaluation } from '../render-evaluation.js';
import { stageProgressWriter } from '../stage-progress.js';
import { UsageError } from '../usage-error.js';
import { MachineFaultError } from '../../eval/machine-fault-error.js';
import type { PipelineEvent } from '../../eval/pipeline/pipeline-events.js';
import { ProblemTooLargeError } from '../../eval/problem/problem-too-large-error.js';
import { WorkerFaultError } from '../../eval/process/worker-fault-error.js';
import { checkDeviceMemoryVariable, parseDuration } from '../size-flags.js';
import { deviceWaitWriter, isBatch, runEvalBatch, sizesToEvaluate } from './eval-batch.js';
import { assertBackendRunsHere } from '../gpu-backend-check.js';
import { createCliLogger, LOG_FORMATS } from '../cli-logger.js';

/** What `kforge eval` needs beyond its io; tests replace any of it. */
export interface EvalCommandDependencies extends Partial<CliIo> {
  /**
   * Default: a local PipelinedEvaluator configured from the environment (build cache, device
   * leases) for one candidate. The command closes it (`close`, when it has one) before it ends.
   */
  createEvaluator?: (wiring: { logger: Logger; cacheDirectory?: string }) => Evaluator;
  /** Default: nvidia-smi lists a GPU. */
  gpuVisible?: () => Promise<boolean>;
}

/**
 * Adds `kforge eval PROBLEM CANDIDATE` (docs/spec.md section 6): exit 0 for `correct`, 1 for any other
 * verdict, 2 for misuse; with `--json`, stdout is exactly one JSON object.
 */
export function registerEvalCommand(program: Command, dependencies: EvalCommandDependencies = {}): Command {
  const command = program
    .command('eval')
    .description(COMMAND_DESCRIPTIONS.eval)
    .argument(
      '<problem>',
      'problem file (KernelBench format: Model, get_inputs, get_init_inputs); or PROBLEM:CANDIDATE pairs, or folders of them (docs/batch.md)',
    )
    .argument('[candidates...]', 'candidate files defining class ModelNew (several: a batch, one JSON line each with --json)')
    .option('--backend <backend>', 'cuda, triton or cpu (default: cuda when a GPU is visible, else cpu)')
    .option('--precision <precision>', 'fp32, fp16 or bf16 (default: fp32)')
    .option('--tolerance <profile>', 'kernelbench (atol=rtol=1e-2) or strict (default: kernelbench)')
    .option('--preset <preset>', 'problem size preset: cpu or gpu (default: cpu on the cpu backend, else gpu)')
    .option('--trials <n>', 'correctness trials, each with fresh inputs (default: 5)')
    .option('--perf-trials <n>', 'timed calls of the candidate and of each baseline (default: 100)')
    .option('--warmup <n>', 'untimed calls before timing (default: 10)')
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
    .option('--set <NAME=VALUE>', 'replace a module constant of the problem, e.g. batch_size=256 (repeatable; recorded as problem_overrides)', collect, [])
    .option('--fit', 'when the problem does not fit this machine at its own sizes, evaluate it at sizes that do (recorded as problem_overrides)')
    .option('--wait <duration>', 'longest wait for room on the device, e.g. 90s, 10m, 1h (default: no limit)')
    .option('--kernelbench <path>', 'a KernelBench checkout: the problems of a KernelBench run folder (level_<L>_problem_<N>_sample_<S>_kernel.py)')
    .option('--retries <n>', 'batch: further attempts of a candidate the machine could not evaluate (default: 2)');
  for (const stage of TIMEOUT_STAGES) {
    const what = stage === 'startup' ? 'limit on a worker starting up, and on any wait outside a stage' : `limit of the ${stage} stage`;
    command.option(`--timeout-${stage} <seconds>`, `${what} (default: ${DEFAULT_STAGE_TIMEOUTS_SECONDS[stage]})`);
  }
  command.addHelpText(
    'after',
    '\nExit status: 0 correct, 1 any other verdict, 2 misuse or a machine that cannot evaluate (no verdict: what ran out and what to do\nare on stderr), 3 an internal error of kforge, 130 interrupted. A batch: 0 when every candidate is correct, 1 when every\ncandidate has a verdict and some are not correct, 2 when the machine could not evaluate some, 3 when kforge failed on some.',
  );
  command.action(async (problem: string, candidates: string[], rawOptions: unknown) => {
    const io = resolveCliIo(dependencies);
    if (candidates.length === 1 && !(await isBatch([problem, ...candidates], io.cwd))) {
      io.setExitCode(await runEval(problem, candidates[0]!, rawOptions, io, dependencies));
    } else {
      io.setExitCode(await runEvalBatch([problem, ...candidates], rawOptions, io, dependencies));
    }
  });
  return command;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

async function runEval(problem: string, candidate: string, rawOptions: unknown, io: CliIo, dependencies: EvalCommandDependencies): Promise<number> {
  const colors = picocolors.createColors(io.color);
  const errorColors = picocolors.createColors(io.color && process.stderr.isTTY === true);
  let result: EvaluationResult;
  try {
    const options = parseEvalOptions(rawOptions);
    checkDeviceMemoryVariable(io.environment);
    const problemPath = await readableFile(problem, 'problem', io.cwd);
    const candidatePath = await readableFile(candidate, 'candidate', io.cwd);
    const backend = options.backend ?? (await defaultBackend(io, dependencies));
    if (options.backend && options.backend !== 'cpu') assertBackendRunsHere(backend, await gpuVisible(io, dependencies), 'eval');
    const overrides = await sizesToEvaluate(problemPath, backend, options, io);
    const logger = createCliLogger(io, { format: options.logFormat });
    const { createEvaluator } = dependencies;
    const { evaluator, close } = await openEvaluator({
      kind: 'local',
      wiring: { environment: io.environment, cwd: io.cwd, logger, cacheDirectory: options.cacheDir },
      // The pipeline's only device is the one asked for (`--device`).
      pipeline: { sizing: ON_DEMAND_SIZING, ...(backend === 'cpu' ? {} : { cudaDevices: [`cuda:${options.device ?? 0}`] }) },
      ...(createEvaluator ? { create: () => createEvaluator({ logger, cacheDirectory: options.cacheDir }) } : {}),
    });
    try {
      result = await evaluateWithInterrupts(
        evaluator,
        request(problemPath, candidatePath, backend, options, overrides),
        stageProgressWriter(io.stderr, errorColors),
        deviceWaitWriter(io.stderr, 'kforge eval'),
      );
    } finally {
      await close();
    }
    const valid = evaluationResultSchema.safeParse(result);
    if (!valid.success) {
      throw new Error(`the evaluation result does not match src/core/verdict.ts: ${valid.error.issues[0]?.path.join('.')}: ${valid.error.issues[0]?.message}`);
    }
    io.stdout.write(options.json ? `${JSON.stringify(result)}\n` : renderEvaluation(result, colors));
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`kforge eval: ${error.message}\n`);
      return EXIT.usage;
    }
    if (error instanceof EvaluatorSetupError || error instanceof MachineFaultError) {
      io.stderr.write(`kforge eval: ${error.message}${error.hint ? `; ${error.hint}` : ''}\n`);
      return EXIT.usage;
    }
    if (error instanceof ProblemTooLargeError) {
      io.stderr.write(`kforge eval: ${error.message}\n`);
      return EXIT.usage;
    }
    if (error instanceof WorkerFaultError) {
      io.stderr.write(`kforge eval: ${error.message}\n${error.stderr ? `${error.stderr.trimEnd()}\n` : ''}`);
      return EXIT.internal;
    }
    if (error instanceof EvaluationCancelledError) {
      io.stderr.write('kforge eval: cancelled; the workers were stopped\n');
      return EXIT.cancelled;
    }
    throw error;
  }
  return result.verdict === 'correct' ? EXIT.correct : EXIT.notCorrect;
}

function request(
  problemPath: string,
  candidatePath: string,
  backend: Backend,
  options: EvalOptions,
  overrides: Record<string, number | boolean>,
): EvaluationRequest {
  return {
    ...(Object.keys(overrides).length > 0 ? { overrides } : {}),
    ...(options.wait !== undefined ? { deviceWaitMs: parseDuration(options.wait) } : {}),
    problemPath,
    candidatePath,
    backend,
    precision: options.precision,
    tolerance: options.tolerance,
    preset: options.preset,
    trials: options.trials,
    perfTrials: options.perfTrials,
    warmupTrials: options.warmup,
    deviceIndex: options.device,
    refreshBaselines: options.refreshBaselines,
    skipTiming: !options.timing,
    guardPolicy: options.guardPolicy,
    shapes: options.shapes,
    shapesGate: options.shapesGate,
    crossCheck: options.crossCheck,
    ...(options.timingBudget !== undefined ? { timingBudgetMs: options.timingBudget * 1000 } : {}),
    timeoutsSeconds: timeoutsFrom(options),
  };
}

/**
 * Runs the evaluation; Ctrl-C or SIGTERM cancels it and kills the workers instead of orphaning
 * them. A second Ctrl-C while they are being stopped is absorbed, so clean-up always finishes.
 */
async function evaluateWithInterrupts(
  evaluator: Evaluator,
  evaluationRequest: EvaluationRequest,
  onProgress: ReturnType<typeof stageProgressWriter>,
  onPipelineEvent: (event: PipelineEvent) => void,
): Promise<EvaluationResult> {
  const controller = new AbortController();
  const cancel = (): void => controller.abort();
  process.on('SIGINT', cancel);
  process.on('SIGTERM', cancel);
  try {
    const evaluateOptions: EvaluateOptions = { signal: controller.signal, onProgress, onPipelineEvent };
    return (await evaluator.evaluate(evaluationRequest, evaluateOptions)).result;
  } finally {
    process.off('SIGINT', cancel);
    process.off('SIGTERM', cancel);
  }
}

/** The absolute path of a readable file, or a {@link UsageError} saying what is wrong with it. */
async function readableFile(given: string, what: 'problem' | 'candidate', cwd: string): Promise<string> {
  const absolute = path.resolve(cwd, given);
  const expected = what === 'problem' ? 'a KernelBench-style problem file' : 'a candidate file that defines ModelNew';
  try {
    const info = await stat(absolute);
    if (info.isDirectory()) throw new UsageError(`the ${what} \`${given}\` is a directory; pass ${expected}`);
    await access(absolute, constants.R_OK);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UsageError(`the ${what} file \`${given}\` does not exist; pass the path of ${expected}`);
    throw new UsageError(`the ${what} file \`${given}\` cannot be read (${code}); check its permissions`);
  }
  return absolute;
}

function gpuVisible(io: CliIo, dependencies: EvalCommandDependencies): Promise<boolean> {
  return (dependencies.gpuVisible ?? (() => isGpuVisible(io.environment)))();
}

async function defaultBackend(io: CliIo, dependencies: EvalCommandDependencies): Promise<Backend> {
  const visible = await gpuVisible(io, dependencies);
  if (!visible) io.stderr.write('kforge eval: no GPU is visible, so the backend is cpu (pass --backend to choose)\n');
  return visible ? 'cuda' : 'cpu';
}
