import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import type { EvaluationResult } from '../../core/verdict.js';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';
import { problemIdentity } from '../problem/problem-identity.js';
import { EvaluationRun } from './evaluation-run.js';
import { resolveEvaluationSettings, type EvaluationSettings } from './evaluation-settings.js';
import { deviceSlotOf, type EvaluateOptions, type Evaluation, type EvaluationProgress, type EvaluationRequest, type Evaluator } from '../evaluator.js';
import { Semaphore } from '../locks/semaphore.js';
import { createScratchDirectory, type ScratchDirectory } from '../process/scratch-directory.js';
import { drawEvaluationSeeds } from './evaluation-seed-plan.js';
import { unreadableInput } from './unreadable-input.js';
import { defaultBaselineCacheDirectory } from '../cache/baseline-cache.js';
import { buildWorkerEnvironment } from '../process/worker-environment.js';
import { WorkerProcess } from '../process/worker-process.js';
import type { WorkerRole } from '../worker-role.js';
import { prepareSandboxFolders, roleEnvironment, sandboxPolicy, workerLaunch, type SandboxPolicy } from '../process/worker-sandbox.js';
import type { WorkerEvaluatorOptions } from './worker-evaluator-options.js';

export interface PythonEvaluatorOptions extends WorkerEvaluatorOptions {
  /** How workers are isolated; default from `KFORGE_SANDBOX`, hiding the default cache root (baselines, store) and the home folder. */
  sandbox?: SandboxPolicy;
}

/**
 * The {@link Evaluator} of docs/architecture.md: runs `python3 -m kforge_worker reference|candidate` in a fresh
 * scratch directory with a scrubbed environment, per the protocol of docs/worker-protocol.md.
 * A candidate's failure comes back as a verdict; only the evaluator's own faults
 * ({@link EvaluatorSetupError}) and cancellation ({@link EvaluationCancelledError}) are thrown.
 * Evaluations asked for at once run one per device at a time, in the order asked (the request's
 * `cuda:N`, or `cpu`); the usage is the wait for the device and the whole evaluation's time on it.
 *
 * @example
 * const evaluator = new PythonEvaluator({ workerDirectory: 'worker', baselineCache });
 * const { result } = await evaluator.evaluate({ problemPath, candidatePath, backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench' });
 */
export class PythonEvaluator implements Evaluator {
  readonly #options: PythonEvaluatorOptions;
  readonly #logger: Logger;
  readonly #sandbox: SandboxPolicy;
  readonly #devices = new Map<string, Semaphore>();

  /** Throws a RangeError when `KFORGE_SANDBOX` has a value it does not know (and no `sandbox` is given). */
  constructor(options: PythonEvaluatorOptions) {
    this.#options = options;
    this.#logger = options.logger ?? pino({ level: 'silent' });
    const environment = options.environment ?? process.env;
    // No build or bytecode cache here: nothing under the cache root is brought back into view.
    this.#sandbox = options.sandbox ?? { ...sandboxPolicy(environment, path.dirname(defaultBaselineCacheDirectory(environment))), exposedPaths: [] };
  }

  async evaluate(request: EvaluationRequest, options: EvaluateOptions = {}): Promise<Evaluation> {
    if (options.signal?.aborted) throw new EvaluationCancelledError(options.signal.reason);
    const device = deviceSlotOf(request);
    let slot = this.#devices.get(device);
    if (!slot) {
      slot = new Semaphore(1);
      this.#devices.set(device, slot);
    }
    const askedAtMs = performance.now();
    const release = await slot.acquire(options.signal);
    const startedAtMs = performance.now();
    try {
      const result = await this.#evaluate(request, options);
      return { result, usage: { device, waitedMs: startedAtMs - askedAtMs, heldMs: performance.now() - startedAtMs } };
    } finally {
      release();
    }
  }

  async #evaluate(request: EvaluationRequest, options: EvaluateOptions): Promise<EvaluationResult> {
    const settings = resolveEvaluationSettings(request);
    const unreadable = await unreadableInput(settings);
    if (unreadable) return unreadable;
    const problemSha256 = problemIdentity(await readFile(settings.problemPath), settings.overrides);
    const seeds = drawEvaluationSeeds(settings, this.#options.randomInteger);
    await prepareSandboxFolders(this.#sandbox);
    const scratch = await createScratchDirectory({
      root: this.#options.scratchRoot,
      keep: this.#options.keepScratch,
      profileDirectory: (this.#options.environment ?? process.env).KFORGE_WORKER_PROFILE,
    });
    if (this.#options.keepScratch) this.#logger.warn({ scratch: scratch.path }, 'keeping the scratch directory');
    try {
      const run = new EvaluationRun({
        settings,
        seeds,
        scratch,
        problemSha256,
        baselineCache: this.#options.baselineCache,
        startWorker: (role, onProgress) => this.#startWorker(role, settings, scratch, options.signal, onProgress),
        onProgress: options.onProgress,
        logger: this.#logger,
        now: this.#options.now ?? (() => new Date()),
      });
      return await run.run();
    } finally {
      await scratch.remove();
    }
  }

  #startWorker(
    role: WorkerRole,
    settings: EvaluationSettings,
    scratch: ScratchDirectory,
    signal: AbortSignal | undefined,
    onProgress: (event: EvaluationProgress) => void,
  ): WorkerProcess {
    const launch = workerLaunch({
      python: this.#options.python ?? 'python3',
      workerDirectory: this.#options.workerDirectory,
      role,
      scratch,
      policy: this.#sandbox,
    });
    return WorkerProcess.start({
      role,
      command: launch.command,
      args: launch.args,
      cwd: scratch.path,
      environment: {
        ...buildWorkerEnvironment(this.#options.environment ?? process.env, {
          homeDirectory: scratch.homeDirectory,
          temporaryDirectory: scratch.temporaryDirectory,
          workerDirectory: this.#options.workerDirectory,
        }),
        ...roleEnvironment(role, this.#sandbox, scratch, this.#options.environment ?? process.env),
      },
      stageLimitsMs: settings.stageLimitsMs,
      idleLimitMs: settings.idleLimitMs,
      terminationGraceMs: this.#options.terminationGraceMs,
      cancelSignal: signal,
      onStage: (message) =>
        onProgress(
          message.status === 'start'
            ? { kind: 'stage-started', role, stage: message.stage }
            : { kind: 'stage-finished', role, stage: message.stage, durationMs: message.duration_ms ?? 0 },
        ),
    });
  }
}
