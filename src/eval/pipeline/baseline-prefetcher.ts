import { setMaxListeners } from 'node:events';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { EXIT_WINDOW_MS } from '../process/worker-process.js';
import { adoptWarmWorker } from '../warm-workers/adopt-warm-worker.js';
import type { SharedBaselineCache } from '../cache/shared-baseline-cache.js';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';
import type { EvaluationProgress, EvaluationRequest } from '../evaluator.js';
import type { HeldDevice } from '../run/evaluation-pipeline.js';
import type { PipelineEvent } from '../pipeline-events.js';
import type { PipelineLane } from './pipeline-lane.js';
import type { PreparedRoom } from './device-memory-gate.js';
import { EvaluationRun } from '../run/evaluation-run.js';
import { drawEvaluationSeeds } from '../run/evaluation-seed-plan.js';
import { resolveEvaluationSettings, type EvaluationSettings } from '../run/evaluation-settings.js';
import type { RandomInteger } from '../run/seeds.js';
import { problemIdentity } from '../problem/problem-identity.js';
import { Semaphore } from '../locks/semaphore.js';
import type { WarmWorker, WarmWorkerPool } from '../warm-workers/warm-worker-pool.js';

/**
 * A baseline prefetch takes the device only when no evaluation is waiting for it: on the H200
 * (2026-12-05) a batch of 40 KernelBench problems queued its 40 prefetches ahead of every built
 * candidate, and no candidate was evaluated in nine minutes.
 */
export const PREFETCH_PRIORITY = -1;
/** Prefetches holding a reference worker at once (each waits for the device with it). */
const PREFETCHES_AT_ONCE = 2;

/** Baseline prefetches by outcome, and the device time they held (ms). */
export interface PrefetchStats {
  measured: number;
  cached: number;
  failed: number;
  deviceMs: number;
}

/** What a prefetch borrows from its evaluator (PipelinedEvaluator). */
export interface BaselinePrefetcherOptions {
  /** Whether a lane's requests prefetch (default: on a GPU, where the baselines hold the device). */
  enabled: (lane: PipelineLane) => boolean;
  pool: WarmWorkerPool;
  baselines: SharedBaselineCache;
  /** The device for the prefetch's baseline stage, as an evaluation takes it, at `priority`. */
  acquireDevice: (
    lane: PipelineLane,
    device: string,
    signal: AbortSignal,
    emit: (event: PipelineEvent) => void,
    room: PreparedRoom,
    priority: number,
  ) => Promise<HeldDevice>;
  /** The device memory the reference's stages need (DeviceMemoryGate.prepare). */
  prepareRoom: (settings: EvaluationSettings) => PreparedRoom;
  /** Pauses of background work while the baselines are timed (PipelinedEvaluator's rule). */
  timedStagePauses: (lane: PipelineLane) => { onProgress: (event: EvaluationProgress) => void; resume: () => void };
  randomInteger?: RandomInteger;
  terminationGraceMs?: number;
  logger: Logger;
  now: () => Date;
}

/**
 * Measures a problem's baselines ahead of its candidates, once per problem and timing settings,
 * in a warm reference worker, a few at a time and behind every evaluation waiting for the device
 * (PREFETCH_PRIORITY). A failure is logged and leaves the measuring to the first candidate, as
 * without a prefetch; `close()` stops those still running (nobody is left to use their figures: a
 * `kforge eval` of a candidate that did not build does not wait for them).
 */
export class BaselinePrefetcher {
  readonly #options: BaselinePrefetcherOptions;
  /** Prefetches started, by problem and timing settings (one each), and those running. */
  readonly #started = new Set<string>();
  readonly #running = new Set<Promise<void>>();
  readonly #slots = new Semaphore(PREFETCHES_AT_ONCE);
  readonly #closing = new AbortController();
  readonly #stats: PrefetchStats = { measured: 0, cached: 0, failed: 0, deviceMs: 0 };

  constructor(options: BaselinePrefetcherOptions) {
    this.#options = options;
    // Every prefetch (one per problem) listens to it while it runs: no leak warning at 11.
    setMaxListeners(0, this.#closing.signal);
  }

  /** Starts measuring the request's baselines, unless it times nothing or they are on their way. */
  start(lane: PipelineLane, request: EvaluationRequest): void {
    const base = resolveEvaluationSettings(request);
    if (!this.#options.enabled(lane) || !base.timing || this.#closing.signal.aborted) return;
    const prefetch = this.#prefetch(lane, base).catch((error: unknown) => {
      if (this.#closing.signal.aborted) return;
      this.#options.logger.warn({ err: error, problem: base.problemPath }, 'baseline prefetch failed; the first candidate measures them');
    });
    this.#running.add(prefetch);
    void prefetch.finally(() => this.#running.delete(prefetch));
  }

  stats(): PrefetchStats {
    return { ...this.#stats };
  }

  /** Stops the prefetches still running and waits for them to end. */
  async close(): Promise<void> {
    this.#closing.abort(new EvaluationCancelledError('the evaluator was closed'));
    await Promise.all([...this.#running]);
  }

  async #prefetch(lane: PipelineLane, base: EvaluationSettings): Promise<void> {
    const problem = await readFile(base.problemPath);
    const problemSha256 = problemIdentity(problem, base.overrides);
    const key = JSON.stringify([
      problemSha256,
      base.preset,
      base.precision,
      base.backend,
      base.perfTrials,
      base.warmupTrials,
      base.warmupMs,
      base.refreshBaselines,
    ]);
    if (this.#started.has(key)) return;
    this.#started.add(key);
    const signal = this.#closing.signal;
    // A few at a time: each holds a reference worker while it waits for the device.
    const slot = await this.#slots.acquire(signal);
    try {
      await this.#prefetchHeld(lane, base, problemSha256, signal);
    } finally {
      slot();
    }
  }

  async #prefetchHeld(lane: PipelineLane, base: EvaluationSettings, problemSha256: string, signal: AbortSignal): Promise<void> {
    const options = this.#options;
    const assignment = lane.devices.assign();
    const device = assignment.device;
    const settings: EvaluationSettings = { ...base, device, refreshBaselines: false };
    const baselines = options.baselines.view({ refresh: base.refreshBaselines });
    const startedAtMs = performance.now();
    let reference: WarmWorker | undefined;
    const pauses = options.timedStagePauses(lane);
    const countHeld = (event: PipelineEvent): void => {
      if (event.kind === 'device-released') this.#stats.deviceMs += event.heldMs;
    };
    try {
      reference = await options.pool.take('reference', device);
      const warm = reference;
      const run = new EvaluationRun({
        settings,
        seeds: drawEvaluationSeeds(settings, options.randomInteger),
        scratch: warm.scratch,
        problemSha256,
        baselineCache: baselines,
        pipeline: {
          buildDirectory: warm.scratch.buildDirectory,
          buildFinished: () => undefined,
          acquireDevice: () => options.acquireDevice(lane, device, signal, countHeld, options.prepareRoom(settings), PREFETCH_PRIORITY),
        },
        startWorker: (_role, progress) => {
          adoptWarmWorker(warm, settings, { signal, terminationGraceMs: options.terminationGraceMs, onProgress: progress });
          return warm.worker;
        },
        onProgress: pauses.onProgress,
        logger: options.logger,
        now: options.now,
      });
      const outcome = await run.prefetchBaselines().catch((error: unknown) => {
        this.#stats.failed += 1;
        throw error;
      });
      this.#stats[outcome] += 1;
      options.logger.info({ problem: base.problemPath, device, outcome, ms: Math.round(performance.now() - startedAtMs) }, 'baseline prefetch');
    } finally {
      pauses.resume();
      baselines.release();
      assignment.release();
      if (reference) {
        await reference.worker.finish(EXIT_WINDOW_MS);
        await reference.scratch.remove();
      }
    }
  }
}
