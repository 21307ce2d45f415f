import { backendChoices, backendsOfKind, defaultBackendFor, runsOnHost } from '../../backends/registry.js';
import type { Command } from 'commander';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { createCliLogger, LOG_FORMATS } from '../io/cli-logger.js';
import type { Logger } from 'pino';
import { z } from 'zod';
import { BACKENDS, type Backend } from '../../core/verdict.js';
import { detectVisibleCudaDevices } from '../../backends/nvidia/cuda-devices.js';
import { DeviceLockHeldError } from '../../eval/pipeline/device-lock-held-error.js';
import type { Evaluator } from '../../eval/evaluator.js';
import { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_STALL_TIMEOUT_MS, QueueWorker, type QueueWorkerEvent } from '../../queue/redis/queue-worker.js';
import { EvaluatorSetupError } from '../../eval/evaluator-setup-error.js';
import { hostGpuName } from '../../backends/nvidia/host-device-names.js';
import { DEFAULT_QUEUE_NAME, QUEUE_NAME_PATTERN } from '../../queue/redis/redis-keys.js';
import { RedisUnreachableError } from '../../queue/redis/redis-unreachable-error.js';
import { EXIT, resolveCliIo, type CliIo, type TextSink } from '../io/cli-io.js';
import { workerPipelineOptions, type WorkerEvaluatorWiring } from '../evaluator/create-worker-evaluator.js';
import { openEvaluator } from '../evaluator/open-evaluator.js';
import { UsageError } from '../io/usage-error.js';
import { choiceFlag, integerFlag, positiveNumberFlag } from '../flags/flag-schemas.js';

/** What `kforge worker` needs beyond its io; tests replace any of it. */
export interface WorkerCommandDependencies extends Partial<CliIo> {
  /** Default: a local PipelinedEvaluator on the worker's devices (`workerPipelineOptions`); the worker closes it as it stops. */
  createEvaluator?: (wiring: WorkerEvaluatorWiring) => Evaluator & { warmUp?: (backend: Backend) => Promise<unknown> };
  /** The CUDA devices visible (`cuda:N`). Default: nvidia-smi with CUDA_VISIBLE_DEVICES respected. */
  visibleCudaDevices?: (environment: NodeJS.ProcessEnv) => Promise<string[]>;
  signals?: Pick<NodeJS.Process, 'on' | 'off'>;
}

const count = (flag: string) => integerFlag(flag, 1);
const seconds = (flag: string) => positiveNumberFlag(flag, 'seconds');

const flagsSchema = z.object({
  redis: z.string({ error: 'expected `--redis` to name a Redis URL, e.g. redis://127.0.0.1:6379' }).min(1),
  gpus: z
    .string()
    .transform((text, context) => {
      const entries = text.split(',').map((entry) => entry.trim());
      if (entries.some((entry) => !/^\d+$/.test(entry)) || new Set(entries).size !== entries.length) {
        context.addIssue({ code: 'custom', message: `expected \`--gpus\` to be distinct GPU indices separated by commas, e.g. 0,1, got \`${text}\`` });
        return z.NEVER;
      }
      return entries.map(Number);
    })
    .optional(),
  backend: choiceFlag('--backend', BACKENDS).optional(),
  queue: z.string().regex(QUEUE_NAME_PATTERN, 'expected `--queue` to be letters, digits, `_`, `.` or `-` (at most 64)').default(DEFAULT_QUEUE_NAME),
  concurrency: count('--concurrency').optional(),
  stallTimeout: seconds('--stall-timeout').optional(),
  heartbeat: seconds('--heartbeat').optional(),
  cacheDir: z.string().min(1).optional(),
  logFormat: choiceFlag('--log-format', LOG_FORMATS).optional(),
});
type WorkerFlags = z.infer<typeof flagsSchema>;

interface WorkerDevices {
  backend: Backend;
  devices: string[];
  deviceLocks: string[];
  concurrency: number;
}

/** The backend, devices, lock names and concurrency the flags ask for, checked against the visible GPUs. */
async function resolveDevices(flags: WorkerFlags, io: CliIo, visible: (environment: NodeJS.ProcessEnv) => Promise<string[]>): Promise<WorkerDevices> {
  const gpusVisible = flags.backend && runsOnHost(flags.backend) ? [] : await visible(io.environment);
  const backend = flags.backend ?? defaultBackendFor(gpusVisible.length > 0);
  if (runsOnHost(backend)) {
    if (flags.gpus)
      throw new UsageError(`\`--gpus\` is for the ${backendsOfKind('gpu')} backends; a cpu worker times on the CPU (use --concurrency for jobs at once)`);
    return { backend, devices: ['cpu'], deviceLocks: [], concurrency: flags.concurrency ?? 1 };
  }
  if (flags.concurrency !== undefined) throw new UsageError('`--concurrency` is for the cpu backend; a GPU worker runs one evaluation per GPU of --gpus');
  if (gpusVisible.length === 0)
    throw new UsageError(
      'no CUDA device is visible (nvidia-smi lists none, or CUDA_VISIBLE_DEVICES hides them all); run `kforge doctor`, or use --backend cpu',
    );
  const gpus = flags.gpus ?? gpusVisible.map((_, index) => index);
  const missing = gpus.find((index) => index >= gpusVisible.length);
  if (missing !== undefined) throw new UsageError(`expected \`--gpus\` to name visible GPUs (0 to ${gpusVisible.length - 1}), got \`${missing}\``);
  return {
    backend,
    devices: gpus.map((index) => `cuda:${index}`),
    deviceLocks: gpus.map((index) => hostGpuName(index, io.environment.CUDA_VISIBLE_DEVICES)),
    concurrency: gpus.length,
  };
}

const shortId = (jobId: string): string => jobId.replace(/^sha256-/, '').slice(0, 12);

/** One line on stderr per thing the worker does. */
function describeEvent(event: QueueWorkerEvent): string {
  switch (event.kind) {
    case 'ready':
      return `${event.workerId} ready: devices ${event.devices.join(', ')}, ${event.concurrency} job${event.concurrency === 1 ? '' : 's'} at once, queue ${event.queue}`;
    case 'job-started':
      return `job ${shortId(event.jobId)} started: ${event.candidate} (attempt ${event.attempt})`;
    case 'job-ended':
      return `job ${shortId(event.jobId)} ${event.verdict === null ? 'did not finish here (failed, cancelled or returned)' : `ended: ${event.verdict}`}`;
    case 'devices-lost':
      return `another worker took ${event.devices.join(', ')}: returning the jobs and stopping`;
    case 'stopping':
      return event.returning
        ? `stopping: returning ${event.activeJobs} running job${event.activeJobs === 1 ? '' : 's'} to the queue`
        : `stopping: finishing ${event.activeJobs} running job${event.activeJobs === 1 ? '' : 's'} (Ctrl-C again to return ${event.activeJobs === 1 ? 'it' : 'them'} to the queue)`;
    case 'error':
      return `error: ${event.message}`;
  }
}

async function runWorker(flags: WorkerFlags, io: CliIo, dependencies: WorkerCommandDependencies): Promise<number> {
  const say = (line: string): void => void (io.stderr as TextSink).write(`kforge worker: ${line}\n`);
  const devices = await resolveDevices(flags, io, dependencies.visibleCudaDevices ?? ((environment) => detectVisibleCudaDevices(environment)));
  const logger: Logger = createCliLogger(io, { format: flags.logFormat });
  const wiring: WorkerEvaluatorWiring = {
    environment: io.environment,
    cwd: io.cwd,
    logger,
    backend: devices.backend,
    cudaDevices: devices.devices,
    concurrency: devices.concurrency,
    ...(flags.cacheDir ? { cacheDirectory: flags.cacheDir } : {}),
  };
  const { createEvaluator } = dependencies;
  // The worker owns the evaluator from here: it closes it as it stops (a PipelinedEvaluator also warms up first).
  const { evaluator } = await openEvaluator({
    kind: 'local',
    wiring,
    pipeline: workerPipelineOptions(wiring),
    // A job is one shape already: the coordinator swept a problem folder's shapes (docs/problems.md).
    problemFolders: false,
    ...(createEvaluator ? { create: () => createEvaluator(wiring) } : {}),
  });
  let worker: QueueWorker;
  let lostDevices = false;
  try {
    worker = await QueueWorker.start({
      redisUrl: flags.redis,
      queueName: flags.queue,
      ...devices,
      evaluator,
      stallTimeoutMs: Math.round((flags.stallTimeout ?? DEFAULT_STALL_TIMEOUT_MS / 1000) * 1000),
      heartbeatIntervalMs: Math.round((flags.heartbeat ?? DEFAULT_HEARTBEAT_INTERVAL_MS / 1000) * 1000),
      logger,
      onEvent: (event) => {
        if (event.kind === 'devices-lost') lostDevices = true;
        say(describeEvent(event));
      },
    });
  } catch (error) {
    await evaluator.close?.();
    throw error;
  }
  const signals = dependencies.signals ?? process;
  const onSignal = (): void => void worker.stop();
  signals.on('SIGINT', onSignal);
  signals.on('SIGTERM', onSignal);
  try {
    await worker.stopped;
  } finally {
    signals.off('SIGINT', onSignal);
    signals.off('SIGTERM', onSignal);
  }
  say('stopped');
  return lostDevices ? EXIT.notCorrect : 0;
}

/**
 * Adds `kforge worker --redis URL`: evaluates jobs of the Redis queue on this host's GPUs (or
 * its CPU) until SIGINT or SIGTERM (the first finishes the running jobs, the second returns them
 * to the queue). Exit status 0 once stopped, 1 when it stopped because another worker took one
 * of its GPUs, 2 for misuse, an unreachable Redis or a GPU another worker owns.
 */
export function registerWorkerCommand(program: Command, dependencies: WorkerCommandDependencies = {}): Command {
  return program
    .command('worker')
    .description(COMMAND_DESCRIPTIONS.worker)
    .option('--redis <url>', 'the Redis the coordinators use, e.g. redis://127.0.0.1:6379')
    .option('--gpus <list>', 'GPU indices this worker owns, e.g. 0,1 (default: every visible GPU); no two workers of a host may share one')
    .option('--backend <backend>', `${backendChoices()} (default: cuda when a GPU is visible, else cpu); ${backendsOfKind('gpu')} workers take jobs of both`)
    .option('--queue <name>', `queue name shared with the coordinators (default ${DEFAULT_QUEUE_NAME})`)
    .option('--concurrency <n>', 'jobs at once on the cpu backend (default 1); GPU workers run one per GPU')
    .option(
      '--stall-timeout <seconds>',
      `a job whose worker stops renewing its lock this long goes to another worker (default ${DEFAULT_STALL_TIMEOUT_MS / 1000})`,
    )
    .option('--heartbeat <seconds>', `interval of the heartbeat and of the GPU lock renewal (default ${DEFAULT_HEARTBEAT_INTERVAL_MS / 1000})`)
    .option('--cache-dir <dir>', 'the cache folder: builds, baselines and bytecode (default: $KFORGE_CACHE_DIR, else .kforge); `kforge cache` reads the same')
    .option('--log-format <format>', `log lines on stderr: ${LOG_FORMATS.join(' or ')} (default: text, or $KFORGE_LOG_FORMAT)`)
    .action(async (rawOptions: unknown) => {
      const io = resolveCliIo(dependencies);
      try {
        const parsed = flagsSchema.safeParse(rawOptions);
        if (!parsed.success) throw new UsageError(parsed.error.issues[0]?.message ?? 'invalid options');
        io.setExitCode(await runWorker(parsed.data, io, dependencies));
      } catch (error) {
        if (
          error instanceof UsageError ||
          error instanceof RedisUnreachableError ||
          error instanceof DeviceLockHeldError ||
          error instanceof EvaluatorSetupError
        ) {
          io.stderr.write(`kforge worker: ${error.message}\n`);
          return io.setExitCode(EXIT.usage);
        }
        throw error;
      }
    });
}
