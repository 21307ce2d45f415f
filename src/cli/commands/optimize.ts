import path from 'node:path';
import type { Command } from 'commander';
import { COMMAND_DESCRIPTIONS } from '../command-descriptions.js';
import type { Logger } from 'pino';
import { z } from 'zod';
import { STRATEGY_NAMES } from '../../agent/search/attempt.js';
import { buildOptimizePlan, DEFAULT_MAX_CANDIDATES, DEFAULT_STALL_AFTER, type OptimizeRequest } from '../../agent/run/optimize-plan-builder.js';
import { OptimizeRequestError } from '../../agent/run/optimize-request-error.js';
import { OptimizeRunError } from '../../agent/run/optimize-run-error.js';
import { loadRunPlan, resumeOptimizeRun, startOptimizeRun, type OptimizeDependencies } from '../../agent/run/optimize-run.js';
import { progressLine } from '../../agent/run/progress-lines.js';
import picocolors from 'picocolors';
import { LiveProgressView, type TerminalStream } from '../live-progress-view.js';
import { formatReportTable } from '../../agent/report/report-table.js';
import { describeNamedDevice } from '../../agent/run/target-device.js';
import { toJsonOutput, type RunReport } from '../../agent/report/run-report.js';
import type { SearchEvent } from '../../agent/search/search-events.js';
import { STALL_POLICIES } from '../../agent/search/stall-detector.js';
import { SuiteError } from '../../agent/run/suite-error.js';
import { ConfigError, loadConfig, type KforgeConfig, type LoadedConfig, type ModelSettings } from '../../core/config.js';
import { BACKENDS, PRECISIONS, PRESETS, TOLERANCE_PROFILES, type Backend } from '../../core/verdict.js';
import type { Evaluator } from '../../eval/evaluator.js';
import { EvaluatorSetupError } from '../../eval/evaluator-setup-error.js';
import { CandidateUnevaluatedError } from '../../agent/run/candidate-unevaluated-error.js';
import { detectGpus, type DetectedGpu } from '../../eval/pipeline/gpu-detection.js';
import type { KernelModel } from '../../llm/kernel-model.js';
import { ModelConfigurationError } from '../../llm/model-configuration-error.js';
import { DEFAULT_STORE_PATH, openRunStore, resolveStorePath, type OpenRunStoreOptions } from '../../store/open-run-store.js';
import type { RunStore } from '../../store/run-store.js';
import { EXIT, resolveCliIo, type CliIo } from '../cli-io.js';
import { openEvaluator, type OpenedEvaluator } from '../open-evaluator.js';
import type { RemoteEvaluation, RemoteEvaluationOptions } from '../remote-evaluation.js';
import { RedisUnreachableError } from '../../queue/redis/redis-unreachable-error.js';
import { openRedisJobQueue } from '../../queue/redis/bullmq-job-queue.js';
import { QUEUE_NAME_PATTERN } from '../../queue/redis/redis-keys.js';
import { integerFlag, positiveNumberFlag } from '../flag-schemas.js';
import { UsageError } from '../usage-error.js';
import { TIMEOUT_STAGES, timeoutOptionName } from '../eval-options.js';
import { DEFAULT_GUARD_POLICY, GUARD_POLICIES, guardPolicyHelp, resolveGuardPolicy } from '../../core/guard-policy.js';
import { assertBackendRunsHere } from '../gpu-backend-check.js';
import { createCliLogger, LOG_FORMATS } from '../cli-logger.js';
import { runOptimizeDryRun, type DryRunOptions } from '../optimize-dry-run.js';
import { addSuiteOptions, resolveSuite, suiteFlagsShape } from '../suite-options.js';
import { pythonExecutable } from '../python-executable.js';
import { auditProblemFile } from '../../eval/problem/problem-auditor.js';
import { WORKER_DIRECTORY } from '../../core/repository-paths.js';
import { createRunModel, routeProblemEvents } from '../run-model.js';
import { DEFAULT_STAGE_TIMEOUTS_SECONDS } from '../../eval/run/stage-limits.js';

/** What `kforge optimize` needs beyond its io; tests replace any of it. */
export interface OptimizeCommandDependencies extends Partial<CliIo> {
  /**
   * Default: a local PipelinedEvaluator configured from the environment (build cache, device
   * leases), as `kforge eval` uses it. The command closes it (`close`, when it has one) when it ends.
   */
  createEvaluator?: (wiring: { logger: Logger; backend: Backend }) => Evaluator | Promise<Evaluator>;
  /** Default: `createRunModel` (`createKernelModel`; for `files`, one subfolder of `--dir` per problem, resumed past the replies taken). */
  createModel?: (settings: ModelSettings) => Promise<KernelModel>;
  openStore?: (options: OpenRunStoreOptions) => Promise<RunStore>;
  /** With `--redis`: the queue's evaluator. Default: `openRemoteEvaluation`. */
  openRemoteEvaluation?: (options: RemoteEvaluationOptions) => Promise<RemoteEvaluation>;
  /**
   * With `--redis` and no backend asked for: the backend the connected workers serve (cuda when a
   * GPU worker is connected, else cpu when a cpu worker is), or null when none is. Default: {@link connectedWorkersBackend}.
   */
  remoteBackend?: (options: { url: string; queueName?: string | undefined }) => Promise<Backend | null>;
  loadConfig?: (configPath: string | undefined, options: { cwd: string }) => Promise<LoadedConfig>;
  /** The GPUs the host has (for the default backend and the target's name). Default: nvidia-smi. */
  detectGpus?: () => Promise<DetectedGpu[]>;
  /** Whether stderr is a terminal (live view) or not (one line per event). Default: `process.stderr.isTTY`. */
  stderrIsTerminal?: boolean;
  /** Where SIGINT and SIGTERM are listened for. Default `process`. */
  signals?: Pick<NodeJS.Process, 'on' | 'off'>;
  /** Ends the process at once on a second Ctrl-C. Default `process.exit`. */
  exit?: (code: number) => void;
  /** `--dry-run`'s audit of one problem. Default: `auditProblemFile` (the worker's audit command). */
  auditProblem?: DryRunOptions['auditProblem'];
}

/**
 * The local pipeline's sizing: one warm worker of each role is ready for the next candidate while
 * the model writes it; candidates submitted together start more workers as they need them.
 */
const WARM_ONE_OF_EACH = { warmCandidatesPerDevice: 1, warmReferencesPerDevice: 1 } as const;

const positiveInteger = (flag: string) => integerFlag(flag, 1);
const nonNegativeInteger = (flag: string) => integerFlag(flag, 0);
const positiveNumber = (flag: string) => positiveNumberFlag(flag);

const oneOf = <const T extends readonly string[]>(flag: string, values: T) =>
  z.string().transform((text, context) => {
    if (!values.includes(text)) {
      context.addIssue({ code: 'custom', message: `expected \`${flag}\` to be one of ${values.join(', ')}, got \`${text}\`` });
      return z.NEVER;
    }
    return text as T[number];
  });

const flagsSchema = z.object({
  provider: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  baseUrl: z.string().min(1).optional(),
  dir: z.string().min(1).optional(),
  strategy: oneOf('--strategy', STRATEGY_NAMES).optional(),
  maxCandidates: positiveInteger('--max-candidates').optional(),
  maxMinutes: positiveNumber('--max-minutes').optional(),
  maxTokens: positiveInteger('--max-tokens').optional(),
  maxCost: positiveNumber('--max-cost').optional(),
  maxGpuSeconds: positiveNumber('--max-gpu-seconds').optional(),
  targetSpeedup: positiveNumber('--target-speedup').optional(),
  concurrency: positiveInteger('--concurrency').optional(),
  backend: oneOf('--backend', BACKENDS).optional(),
  precision: oneOf('--precision', PRECISIONS).optional(),
  tolerance: oneOf('--tolerance', TOLERANCE_PROFILES).optional(),
  guardPolicy: z
    .string()
    .transform((text, context) => {
      const resolved = resolveGuardPolicy(text);
      if (resolved === undefined) {
        context.addIssue({ code: 'custom', message: `expected \`--guard-policy\` to be one of ${GUARD_POLICIES.join(', ')}, got \`${text}\`` });
        return z.NEVER;
      }
      return resolved;
    })
    .optional(),
  trials: positiveInteger('--trials').optional(),
  perfTrials: positiveInteger('--perf-trials').optional(),
  warmup: nonNegativeInteger('--warmup').optional(),
  device: nonNegativeInteger('--device').optional(),
  cacheDir: z.string().min(1).optional(),
  redis: z.string().min(1).optional(),
  queue: z.string().regex(QUEUE_NAME_PATTERN, 'expected `--queue` to be letters, digits, `_`, `.` or `-` (at most 64)').optional(),
  remoteSlots: positiveInteger('--remote-slots').optional(),
  preset: oneOf('--preset', PRESETS).optional(),
  stallAfter: positiveInteger('--stall-after').optional(),
  onStall: oneOf('--on-stall', STALL_POLICIES).optional(),
  switchTo: oneOf('--switch-to', STRATEGY_NAMES).optional(),
  store: z.string().min(1).optional(),
  out: z.string().min(1).optional(),
  resume: z.string().min(1).optional(),
  config: z.string().min(1).optional(),
  json: z.boolean().default(false),
  dryRun: z.boolean().default(false),
  ...suiteFlagsShape,
  logFormat: oneOf('--log-format', LOG_FORMATS).optional(),
  ...Object.fromEntries(TIMEOUT_STAGES.map((stage) => [timeoutOptionName(stage), positiveNumber(`--timeout-${stage}`).optional()])),
});
type OptimizeFlags = z.infer<typeof flagsSchema> & Record<string, unknown>;

/** Flags that describe a new run; with `--resume` the stored settings are used instead. */
const NEW_RUN_FLAGS = [
  ...[
    'provider',
    'model',
    'baseUrl',
    'dir',
    'strategy',
    'maxCandidates',
    'maxMinutes',
    'maxTokens',
    'maxCost',
    'maxGpuSeconds',
    'targetSpeedup',
    'concurrency',
  ],
  ...['backend', 'precision', 'tolerance', 'guardPolicy', 'trials', 'perfTrials', 'warmup', 'device', 'preset', 'stallAfter', 'onStall', 'switchTo', 'out'],
  ...['filter', 'limit', 'problems', 'dryRun'],
  ...TIMEOUT_STAGES.map(timeoutOptionName),
];

function parseFlags(raw: unknown, problems: readonly string[]): OptimizeFlags {
  const parsed = flagsSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(parsed.error.issues[0]?.message ?? 'invalid options');
  const flags: OptimizeFlags = parsed.data;
  if (flags.resume) {
    const extra = NEW_RUN_FLAGS.filter((name) => flags[name] !== undefined && flags[name] !== false);
    if (problems.length > 0 || extra.length > 0) {
      throw new UsageError(
        `--resume continues run \`${flags.resume}\` with its stored settings: drop ${problems.length > 0 ? 'the problem arguments' : `--${extra[0]!.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`}`,
      );
    }
  } else if (problems.length === 0 && !flags.problems) {
    throw new UsageError('expected a problem file or folder (or --problems FILE): kforge optimize PROBLEM.py --provider NAME --model ID');
  }
  return flags;
}

/** Search events that only a live view shows; the line-by-line form keeps one line per outcome. */
const LIVE_ONLY_EVENTS: ReadonlySet<SearchEvent['type']> = new Set(['model-called', 'candidate-stage']);

/** Progress on stderr: where the command writes notices, and where search events go. */
interface ProgressOutput {
  onEvent: (event: SearchEvent) => void;
  /** A notice line (ends with a newline), written above a live view. */
  notice: (text: string) => void;
  /** Ends a live view, leaving its last frame. */
  stop: () => void;
}

/** A live view redrawn in place on a terminal (fitted to its size), one logfmt line per event otherwise. */
function progressOutput(io: CliIo, terminal: boolean): ProgressOutput {
  const stderr = io.stderr;
  if (!terminal) {
    return {
      onEvent: (event) => void (LIVE_ONLY_EVENTS.has(event.type) || stderr.write(`${progressLine(event)}\n`)),
      notice: (text) => void stderr.write(text),
      stop: () => undefined,
    };
  }
  const view = new LiveProgressView({ stream: stderr as TerminalStream, colors: picocolors.createColors(io.color && !io.environment.NO_COLOR) });
  return { onEvent: view.onEvent, notice: (text) => view.log(text), stop: () => view.stop() };
}

/** The request a new run's flags make. */
function requestFromFlags(flags: OptimizeFlags, problems: string[], cwd: string, storePath: string): OptimizeRequest {
  const { provider, model, baseUrl, dir, strategy, maxCandidates, maxMinutes, maxTokens, maxGpuSeconds, targetSpeedup, concurrency } = flags;
  const { backend, precision, tolerance, guardPolicy, trials, perfTrials, preset, stallAfter, onStall, switchTo } = flags;
  return {
    ...{
      provider,
      model,
      baseUrl,
      dir: dir === undefined ? undefined : path.resolve(cwd, dir),
      strategy,
      maxCandidates,
      maxMinutes,
      maxTokens,
      maxGpuSeconds,
      targetSpeedup,
      concurrency,
    },
    ...{ backend, precision, tolerance, guardPolicy, trials, perfTrials, preset, stallAfter, onStall, switchTo },
    ...(flags.maxCost === undefined ? {} : { maxCostUsd: flags.maxCost }),
    ...(flags.warmup === undefined ? {} : { warmupTrials: flags.warmup }),
    ...(flags.device === undefined ? {} : { deviceIndex: flags.device }),
    timeoutsSeconds: Object.fromEntries(
      TIMEOUT_STAGES.flatMap((stage) => (typeof flags[timeoutOptionName(stage)] === 'number' ? [[stage, flags[timeoutOptionName(stage)] as number]] : [])),
    ),
    problems,
    outDir: path.resolve(cwd, flags.out ?? 'kforge-out'),
    candidatesDir: path.join(path.dirname(storePath), 'candidates'),
  };
}

function modelSettings(plan: { model: Omit<ModelSettings, 'apiKey'> }, config: KforgeConfig): ModelSettings {
  const apiKey = config.apiKey && config.provider === plan.model.provider ? { apiKey: config.apiKey } : {};
  return { ...plan.model, ...apiKey } as ModelSettings;
}

/** The backend the workers connected to a Redis queue serve: cuda when any GPU worker is connected, else cpu when a cpu worker is, else null. */
export async function connectedWorkersBackend(options: { url: string; queueName?: string | undefined }): Promise<Backend | null> {
  const queue = await openRedisJobQueue({ url: options.url, ...(options.queueName ? { queueName: options.queueName } : {}) });
  try {
    if ((await queue.slots('cuda')) > 0) return 'cuda';
    if ((await queue.slots('cpu')) > 0) return 'cpu';
    return null;
  } finally {
    await queue.close();
  }
}

/** With `--redis`: the backend of the connected workers, said on stderr; null when no worker is connected. */
async function remoteDefaultBackend(io: CliIo, flags: OptimizeFlags, dependencies: OptimizeCommandDependencies): Promise<Backend | null> {
  if (!flags.redis) return null;
  const backend = await (dependencies.remoteBackend ?? connectedWorkersBackend)({ url: flags.redis, queueName: flags.queue });
  if (backend) io.stderr.write(`kforge optimize: the backend is ${backend}, as the workers connected to the queue serve it (pass --backend to choose)\n`);
  return backend;
}

/** Whether CUDA programs here see a GPU: nvidia-smi lists one and CUDA_VISIBLE_DEVICES hides none. */
function gpusVisible(io: CliIo, gpus: DetectedGpu[]): boolean {
  return gpus.length > 0 && !['', '-1'].includes(io.environment.CUDA_VISIBLE_DEVICES?.trim() ?? 'unset');
}

/** The backend when none is asked for: cuda when a GPU is visible, else cpu (as `kforge eval` decides). */
async function defaultBackend(io: CliIo, gpus: DetectedGpu[]): Promise<Backend> {
  if (gpusVisible(io, gpus)) return 'cuda';
  io.stderr.write('kforge optimize: no GPU is visible, so the backend is cpu (pass --backend to choose)\n');
  return 'cpu';
}

/**
 * Adds `kforge optimize PROBLEM_OR_DIR...`: searches each problem with the chosen strategy and
 * model, records everything in the store, writes the best kernel of each problem with its verdict
 * JSON, and prints the per-problem and total table (or, with `--json`, one JSON object). Exit
 * status 0 when the run finished or paused, 130 when it was stopped (resumable), 2 for misuse,
 * 3 when the run failed for a reason of kforge's or the machine's.
 */
export function registerOptimizeCommand(program: Command, dependencies: OptimizeCommandDependencies = {}): Command {
  const run = async (io: CliIo, problemArguments: string[], rawOptions: unknown): Promise<number> => {
    const flags = parseFlags(rawOptions, problemArguments);
    const { config } = await (dependencies.loadConfig ?? loadConfig)(flags.config, { cwd: io.cwd });
    const storePath = resolveStorePath({ path: flags.store ?? config.store?.path, cwd: io.cwd });
    if (flags.dryRun) return dryRun(io, flags, problemArguments, config, storePath);
    const store = await (dependencies.openStore ?? openRunStore)({ path: storePath, cwd: io.cwd });
    const controller = new AbortController();
    const signals = dependencies.signals ?? process;
    const progress = progressOutput(io, dependencies.stderrIsTerminal ?? process.stderr.isTTY === true);
    const onSignal = (): void => {
      if (controller.signal.aborted) return void (dependencies.exit ?? process.exit)(EXIT.cancelled);
      progress.notice('kforge optimize: stopping; unfinished work stays in the store for --resume (Ctrl-C again to quit at once)\n');
      controller.abort();
    };
    signals.on('SIGINT', onSignal);
    signals.on('SIGTERM', onSignal);
    let opened: OpenedEvaluator | undefined;
    try {
      const gpus = await (dependencies.detectGpus ?? detectGpus)();
      const plan = flags.resume
        ? (await loadRunPlan(store, flags.resume)).plan
        : buildOptimizePlan(
            requestFromFlags(
              { ...flags, backend: await chosenBackend(io, flags, config, gpus) },
              await resolveSuite(problemArguments, flags, io.cwd),
              io.cwd,
              storePath,
            ),
            config,
          );
      const { backend, deviceIndex } = plan.evaluation;
      if (!flags.redis) assertBackendRunsHere(backend, gpusVisible(io, gpus), 'optimize');
      const gpuName = gpus[deviceIndex ?? 0]?.name;
      const logger = createCliLogger(io, { format: flags.logFormat, write: progress.notice });
      const model = await createRunModel({
        plan,
        settings: modelSettings(plan, config),
        store,
        ...(flags.resume ? { resumeRunId: flags.resume } : {}),
        ...(dependencies.createModel ? { createModel: dependencies.createModel } : {}),
      });
      if (!flags.redis && (flags.queue !== undefined || flags.remoteSlots !== undefined))
        throw new UsageError('`--queue` and `--remote-slots` go with `--redis URL`');
      const { createEvaluator, openRemoteEvaluation } = dependencies;
      opened = await openEvaluator(
        flags.redis
          ? {
              kind: 'redis',
              options: { url: flags.redis, queueName: flags.queue, slots: flags.remoteSlots, backend, logger, stderr: io.stderr },
              ...(openRemoteEvaluation ? { open: openRemoteEvaluation } : {}),
            }
          : {
              kind: 'local',
              wiring: { environment: io.environment, cwd: io.cwd, logger, ...(flags.cacheDir ? { cacheDirectory: flags.cacheDir } : {}) },
              // The run's requests name one device (`--device`); the pipeline's only device is that one.
              pipeline: { sizing: WARM_ONE_OF_EACH, ...(backend === 'cpu' ? {} : { cudaDevices: [`cuda:${deviceIndex ?? 0}`] }) },
              ...(createEvaluator ? { create: () => createEvaluator({ logger, backend }) } : {}),
            },
      );
      const dependenciesOfRun: OptimizeDependencies = {
        store,
        model,
        evaluator: opened.evaluator,
        ...(backend !== 'cpu' && gpuName ? { target: describeNamedDevice(gpuName, backend) } : {}),
        onEvent: routeProblemEvents(model, progress.onEvent),
        signal: controller.signal,
      };
      const report = flags.resume ? await resumeOptimizeRun(flags.resume, dependenciesOfRun) : await startOptimizeRun(plan, dependenciesOfRun);
      progress.stop();
      writeReport(report, flags.json, io);
      return report.status === 'stopped' ? EXIT.cancelled : 0;
    } finally {
      progress.stop();
      signals.off('SIGINT', onSignal);
      signals.off('SIGTERM', onSignal);
      await opened?.close({ cancel: controller.signal.aborted });
      await store.close();
    }
  };

  /** `--dry-run`: the plan a new run would make, its problems audited; no store, no model, no evaluator. */
  const dryRun = async (io: CliIo, flags: OptimizeFlags, problemArguments: string[], config: KforgeConfig, storePath: string): Promise<number> => {
    const gpus = await (dependencies.detectGpus ?? detectGpus)();
    const backend = await chosenBackend(io, flags, config, gpus);
    const plan = buildOptimizePlan(requestFromFlags({ ...flags, backend }, await resolveSuite(problemArguments, flags, io.cwd), io.cwd, storePath), config);
    return runOptimizeDryRun(io, plan, {
      auditProblem: dependencies.auditProblem ?? auditProblemFile,
      auditor: {
        python: pythonExecutable(io.environment),
        workerDirectory: io.environment.KFORGE_WORKER_DIR ? path.resolve(io.cwd, io.environment.KFORGE_WORKER_DIR) : WORKER_DIRECTORY,
        environment: io.environment,
      },
      json: flags.json,
    });
  };

  /** The backend of a new run: the flag, the config, the connected workers' (--redis), else by the visible GPUs. */
  const chosenBackend = async (io: CliIo, flags: OptimizeFlags, config: KforgeConfig, gpus: DetectedGpu[]): Promise<Backend> =>
    flags.backend ?? config.evaluator?.backend ?? (await remoteDefaultBackend(io, flags, dependencies)) ?? (await defaultBackend(io, gpus));

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
    .option('--backend <backend>', 'cuda, triton or cpu (default: with --redis, what the connected workers serve; else cuda when a GPU is visible, else cpu)')
    .option('--precision <precision>', 'fp32, fp16 or bf16 (default fp32)')
    .option('--tolerance <profile>', 'kernelbench or strict (default kernelbench)')
    .option('--guard-policy <policy>', `guard policy of every evaluation: ${guardPolicyHelp()} (default ${DEFAULT_GUARD_POLICY}; see docs/guard.md)`)
    .option('--trials <n>', 'correctness trials per candidate (default 5)')
    .option('--perf-trials <n>', 'timed calls per candidate (default 100)')
    .option('--preset <preset>', 'problem sizes: cpu or gpu (default: by backend)')
    .option('--warmup <n>', 'untimed calls before timing (default 10)')
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
    command.option(`--timeout-${stage} <seconds>`, `evaluator limit of the ${stage} stage (default ${DEFAULT_STAGE_TIMEOUTS_SECONDS[stage]})`);
  }
  return command.action(async (problemArguments: string[], rawOptions: unknown) => {
    const io = resolveCliIo(dependencies);
    try {
      io.setExitCode(await run(io, problemArguments, rawOptions));
    } catch (error) {
      io.setExitCode(reportFailure(error, io));
    }
  });
}

/** Prints a failure in one line and returns the exit status; kforge's own bugs are rethrown. */
function reportFailure(error: unknown, io: CliIo): number {
  const setup =
    error instanceof OptimizeRunError && error.cause instanceof EvaluatorSetupError ? error.cause : error instanceof EvaluatorSetupError ? error : null;
  if (setup) {
    io.stderr.write(`kforge optimize: ${setup.message}${setup.hint ? `; ${setup.hint}` : ''}\n`);
    return EXIT.usage;
  }
  if (error instanceof OptimizeRunError && error.cause instanceof CandidateUnevaluatedError) {
    // The machine, not a candidate: no verdict was recorded, and a resume evaluates the candidate again.
    io.stderr.write(`kforge optimize: ${error.cause.message}\nwhen the machine has room again, continue with: kforge optimize --resume ${error.runId}\n`);
    return EXIT.usage;
  }
  const usage = [UsageError, OptimizeRequestError, SuiteError, ConfigError, ModelConfigurationError, RedisUnreachableError].some(
    (kind) => error instanceof kind,
  );
  if (!usage && !(error instanceof OptimizeRunError)) throw error;
  io.stderr.write(`kforge optimize: ${(error as Error).message}\n`);
  if (error instanceof OptimizeRunError) io.stderr.write(`fix the cause, then continue with: kforge optimize --resume ${error.runId}\n`);
  return usage ? EXIT.usage : EXIT.internal;
}

function writeReport(report: RunReport, json: boolean, io: CliIo): void {
  if (json) {
    io.stdout.write(`${JSON.stringify(toJsonOutput(report))}\n`);
    return;
  }
  io.stdout.write(`${formatReportTable(report)}\n`);
  const written = report.problems.flatMap((problem) => (problem.best ? [problem.best.kernelPath] : []));
  if (written.length > 0) io.stderr.write(`best kernels written to ${path.dirname(written[0]!)}\n`);
  if (report.status === 'stopped' || report.status === 'paused') io.stderr.write(`resume with: kforge optimize --resume ${report.runId}\n`);
}
