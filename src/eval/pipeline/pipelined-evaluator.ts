/**
 * Longer than convention 4's 300 lines: `PipelinedEvaluator` wires the shared parts of a pipeline
 * (warm workers, lanes, memory gate, prefetches, build and bytecode caches) and runs each
 * evaluation through them, build first, then its device lease. Its options live in
 * `pipelined-evaluator-options.ts`, the device lease in `device-lease.ts`.
 */
import { createHash } from 'node:crypto';
import { backendModule } from '../../backends/registry.js';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import type { EvaluationResult } from '../../core/verdict.js';
import { EXIT_WINDOW_MS } from '../process/worker-process.js';
import { adoptWarmWorker, helloWithin } from '../warm-workers/adopt-warm-worker.js';
import { BaselinePrefetcher } from './baseline-prefetcher.js';
import type { BuildCache, BuildReservation } from '../cache/build-cache.js';
import { buildKey, buildKeyMaterialOf } from '../cache/build-key.js';
import { prepareBytecodeCache } from '../cache/bytecode-cache.js';
import { probeCompilerIdentity } from '../cache/compiler-identity.js';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';
import { EvaluatorSetupError } from '../evaluator-setup-error.js';
import type { BuildReport, EvaluationPipeline, HeldDevice } from '../run/evaluation-pipeline.js';
import { EvaluationRun } from '../run/evaluation-run.js';
import { problemIdentity } from '../problem/problem-identity.js';
import { defaultDeviceLockDirectory } from './host-device-lock.js';
import { DeviceMemoryGate, WORKER_CONTEXT_BYTES, type PreparedRoom } from './device-memory-gate.js';
import { resolveEvaluationSettings, type EvaluationSettings } from '../run/evaluation-settings.js';
import { deviceSlotOf, type EvaluateOptions, type Evaluation, type EvaluationProgress, type EvaluationRequest, type Evaluator } from '../evaluator.js';
import type { PipelineEvent } from '../pipeline-events.js';
import { createPipelineLane, type LaneKind, type PipelineLane } from './pipeline-lane.js';
import type { PipelineSizing } from './pipeline-sizing.js';
import { ProcessGroupPauser } from '../process/process-group-pauser.js';
import { drawEvaluationSeeds } from '../run/evaluation-seed-plan.js';
import type { Release } from '../locks/semaphore.js';
import { SharedBaselineCache } from '../cache/shared-baseline-cache.js';
import { unreadableInput } from '../run/unreadable-input.js';
import { WarmWorkerPool, type WarmWorker } from '../warm-workers/warm-worker-pool.js';
import { WarmWorkerSpawner } from '../warm-workers/warm-worker-spawner.js';
import { sandboxPolicy } from '../process/worker-sandbox.js';
import { isolationOf } from '../process/isolation-report.js';
import type { PipelinedEvaluatorOptions, PipelineUsage } from './pipelined-evaluator-options.js';
import { leaseDevice } from './device-lease.js';
import type { WorkerEnvironment } from '../process/protocol.js';

/** One evaluation on its device, and what it holds until it ends. */
interface OnDevice {
  lane: PipelineLane;
  device: string;
  settings: EvaluationSettings;
  options: EvaluateOptions;
  emit: (event: PipelineEvent) => void;
  room: PreparedRoom;
  /** The warm workers it took, ended with it. */
  taken: WarmWorker[];
  reservation?: BuildReservation;
  releaseBuild?: Release;
  /** The build cache entry being recorded. */
  recording?: Promise<void>;
}

/**
 * The {@link Evaluator} for many candidates at once. Each candidate builds on the host's cores
 * (a bounded pool) in a content-addressed {@link BuildCache} folder, in a warm worker that waits
 * after its build (`await_device`); then it takes a lease on one device — the stages that run
 * there (the reference, load, correctness, timing) hold it alone, and a GPU also against every
 * other kforge process of the host (a lock file in `deviceLockDirectory`) — with a warm reference worker,
 * and baselines measured once per key for the whole pipeline. Builds of later candidates overlap
 * the device stages of earlier ones. Every worker serves one candidate and is then discarded.
 * On the cpu backend builds and warm-ups are paused (SIGSTOP) while a candidate or a baseline
 * is timed.
 * Results are those of {@link PythonEvaluator}. A request without a `deviceIndex` goes to the
 * device with the fewest evaluations; one with it, to that device (one the pipeline does not hold
 * is refused with an `EvaluatorSetupError`). Each evaluation's usage is its lease: the time from
 * its submission to `device-acquired` (waited) and the time it held the device (held).
 *
 * @example
 * const evaluator = new PipelinedEvaluator({ workerDirectory, baselineCache, buildCache });
 * const evaluations = await Promise.all(requests.map((request) => evaluator.evaluate(request)));
 * await evaluator.close();
 */
export class PipelinedEvaluator implements Evaluator {
  readonly #options: PipelinedEvaluatorOptions;
  readonly #logger: Logger;
  readonly #environment: NodeJS.ProcessEnv;
  readonly #now: () => Date;
  readonly #pauser = new ProcessGroupPauser();
  readonly #baselines: SharedBaselineCache;
  readonly #pool: WarmWorkerPool;
  readonly #lanes = new Map<LaneKind, Promise<PipelineLane>>();
  readonly #sizingOfDevice = new Map<string, PipelineSizing>();
  /** Host-wide locks being removed; {@link close} waits for them. */
  readonly #releasing = new Set<Promise<void>>();
  #compiler: Promise<string | null> | undefined;
  #bytecodePrefix: Promise<string | null> | undefined;
  readonly #sizes: DeviceMemoryGate;
  readonly #prefetcher: BaselinePrefetcher;
  readonly #spawner: WarmWorkerSpawner;

  constructor(options: PipelinedEvaluatorOptions) {
    this.#options = options;
    this.#logger = options.logger ?? pino({ level: 'silent' });
    this.#environment = options.environment ?? process.env;
    this.#now = options.now ?? (() => new Date());
    this.#baselines = new SharedBaselineCache(options.baselineCache);
    this.#sizes = new DeviceMemoryGate({
      enabled: options.memoryBudget !== false,
      python: options.python ?? 'python3',
      workerDirectory: options.workerDirectory,
      environment: this.#environment,
      directory: options.deviceLockDirectory ?? defaultDeviceLockDirectory(),
      logger: this.#logger,
    });
    const spawner = new WarmWorkerSpawner({
      sandbox: options.sandbox ?? sandboxPolicy(this.#environment, path.dirname(options.buildCache.directory)),
      python: options.python ?? 'python3',
      workerDirectory: options.workerDirectory,
      environment: this.#environment,
      scratchRoot: options.scratchRoot,
      keepScratch: options.keepScratch,
      terminationGraceMs: options.terminationGraceMs,
      pauser: this.#pauser,
      bytecodePrefix: () => this.#bytecodeCache(),
      reserveContext: (device, label, signal, onWait) => this.#sizes.reserveContext(device, `pid ${process.pid}: ${label}`, signal, onWait),
    });
    this.#spawner = spawner;
    this.#pool = new WarmWorkerPool({
      spawn: (role, device, makeContext) => spawner.spawn(role, device, makeContext),
      discard: (warm) => spawner.discard(warm),
      wantedContexts: (device) => this.#sizes.wantedContexts(device),
      idleTarget: (role, device) => {
        const sizing = this.#sizingOfDevice.get(device);
        if (!sizing) return 0;
        return role === 'candidate' ? sizing.warmCandidatesPerDevice : sizing.warmReferencesPerDevice;
      },
      logger: this.#logger,
    });
    this.#prefetcher = new BaselinePrefetcher({
      enabled: (lane) => options.prefetchBaselines ?? lane.kind === 'gpu',
      pool: this.#pool,
      baselines: this.#baselines,
      acquireDevice: (lane, device, signal, emit, room, priority) => this.#acquireDevice(lane, device, signal, emit, room, priority),
      prepareRoom: (settings) => this.#sizes.prepare(settings, 'reference'),
      timedStagePauses: (lane) => this.#timedStagePauses(lane),
      randomInteger: options.randomInteger,
      terminationGraceMs: options.terminationGraceMs,
      logger: this.#logger,
      now: this.#now,
    });
  }

  /** Finds the devices of a backend and starts its warm workers, before the first evaluation. */
  async warmUp(backend: EvaluationRequest['backend']): Promise<readonly string[]> {
    return (await this.#lane(backendModule(backend).detect.kind)).devices.devices;
  }

  async evaluate(request: EvaluationRequest, options: EvaluateOptions = {}): Promise<Evaluation> {
    if (options.signal?.aborted) throw new EvaluationCancelledError(options.signal.reason);
    const startedAt = this.#now();
    const submittedAtMs = performance.now();
    const lane = await this.#lane(backendModule(request.backend).detect.kind);
    const wanted = lane.kind === 'cpu' || request.deviceIndex === undefined ? undefined : deviceSlotOf(request);
    if (wanted !== undefined && !lane.devices.devices.includes(wanted)) {
      throw new EvaluatorSetupError(
        `expected the device \`${wanted}\` of the request (\`--device ${request.deviceIndex}\`) to be one of this evaluator's devices, ${lane.devices.devices.join(', ')}`,
        {
          hint: 'pick a device it has, or leave the device index out to let it choose',
        },
      );
    }
    this.#prefetcher.start(lane, request);
    const releaseInFlight = await lane.inFlight.acquire(options.signal);
    const assignment = lane.devices.assign(wanted);
    // The lease: from `device-acquired` to `device-released` (a candidate that did not build takes none).
    let acquiredAtMs: number | null = null;
    let heldMs = 0;
    const onPipelineEvent = (event: PipelineEvent): void => {
      if (event.kind === 'device-acquired') acquiredAtMs ??= performance.now();
      else if (event.kind === 'device-released') heldMs += event.heldMs;
      options.onPipelineEvent?.(event);
    };
    try {
      const result = await this.#evaluateOn(lane, assignment.device, request, { ...options, onPipelineEvent }, startedAt);
      return { result, usage: { device: assignment.device, waitedMs: (acquiredAtMs ?? performance.now()) - submittedAtMs, heldMs } };
    } finally {
      assignment.release();
      releaseInFlight();
    }
  }

  /** The bytecode-cache prefix its workers run with (null: the installed bytecode serves, or none could be made). */
  bytecodePrefix(): Promise<string | null> {
    return this.#bytecodeCache();
  }

  /** Devices, warm pool and CPU pauses so far. */
  async usage(): Promise<PipelineUsage> {
    const lanes = await Promise.all([...this.#lanes.values()].map((lane) => lane.catch(() => null)));
    const { pauses, pausedMs } = this.#pauser.stats();
    return {
      devices: lanes.flatMap((lane) => lane?.devices.usage() ?? []),
      pool: this.#pool.stats(),
      cpuQuiet: { pauses, pausedMs },
      prefetches: this.#prefetcher.stats(),
    };
  }

  /**
   * Ends the idle warm workers and waits for the host-wide device locks being released; evaluations
   * still running finish first only if awaited by the caller.
   */
  async close(): Promise<void> {
    await this.#prefetcher.close();
    this.#spawner.close();
    await this.#pool.close();
    await Promise.all([...this.#releasing]);
  }

  async #evaluateOn(lane: PipelineLane, device: string, request: EvaluationRequest, options: EvaluateOptions, startedAt: Date): Promise<EvaluationResult> {
    const base = resolveEvaluationSettings(request);
    const unreadable = await unreadableInput(base);
    if (unreadable) return unreadable;
    const [problem, source] = await Promise.all([readFile(base.problemPath), readFile(base.candidatePath)]);
    // The view below refreshes once per key for the pipeline, so the run itself never skips the cache.
    const settings: EvaluationSettings = { ...base, device, refreshBaselines: false };
    const baselines = this.#baselines.view({ refresh: base.refreshBaselines });
    const emit = (event: PipelineEvent): void => options.onPipelineEvent?.(event);
    const on: OnDevice = { lane, device, settings, options, emit, room: this.#sizes.prepare(settings, 'evaluation'), taken: [] };
    const pauses = this.#timedStagePauses(lane);
    try {
      const candidate = await this.#pool.take('candidate', device);
      on.taken.push(candidate);
      const adoption = { signal: options.signal, terminationGraceMs: this.#options.terminationGraceMs };
      adoptWarmWorker(candidate, settings, { ...adoption, onProgress: options.onProgress ?? (() => undefined) });
      const pipeline = await this.#buildFirst(on, candidate, source);
      const run = new EvaluationRun({
        settings,
        seeds: drawEvaluationSeeds(settings, this.#options.randomInteger),
        scratch: candidate.scratch,
        problemSha256: problemIdentity(problem, settings.overrides),
        baselineCache: baselines,
        pipeline,
        startWorker: async (role, progress) => {
          const warm = role === 'candidate' ? candidate : await this.#pool.take('reference', device);
          if (warm !== candidate) on.taken.push(warm);
          adoptWarmWorker(warm, settings, { ...adoption, onProgress: progress });
          return warm.worker;
        },
        onProgress: (event) => {
          pauses.onProgress(event);
          options.onProgress?.(event);
        },
        logger: this.#logger,
        now: this.#now,
        startedAt,
      });
      const result = await run.run();
      const estimateBytes = await on.room.estimateBytes();
      if (estimateBytes !== null) result.memory = { ...result.memory, estimate_bytes: estimateBytes };
      return result;
    } finally {
      pauses.resume();
      on.releaseBuild?.();
      baselines.release();
      await this.#discardTaken(on);
    }
  }

  /**
   * The candidate's build, before its device: sized and given room for its context, its build cache
   * entry reserved, a build slot taken. Returns the {@link EvaluationPipeline} its run goes on with.
   */
  async #buildFirst(on: OnDevice, candidate: WarmWorker, source: Buffer): Promise<EvaluationPipeline> {
    const { lane, device, settings, options, emit } = on;
    // A worker that never says hello is left to the run, which times it out as a setup error.
    const hello = await helloWithin(candidate, settings.idleLimitMs);
    // A problem that cannot fit is refused before its candidate builds (sized while the worker started).
    await on.room.neededBytes(device);
    // Its context, if it was started without one (the device's contexts were at their cap): made
    // with the build, so reserved before it. The wait is not bounded by `--wait` (its clock starts
    // at the evaluation's turn for the device): the contexts it waits on are idle workers', given
    // back at once, or those of evaluations waiting for the device (a batch's own candidates, as
    // often as not), freed as the device's queue moves (docs/sizes.md).
    await this.#spawner.reserveContextFor(candidate, options.signal, (holders, freeBytes, capacityBytes, contextCapBytes) =>
      emit({ kind: 'device-waiting', device, reason: 'memory', neededBytes: WORKER_CONTEXT_BYTES, freeBytes, capacityBytes, holders, contextCapBytes }),
    );
    const askedAtMs = performance.now();
    const key = hello ? await this.#reserveBuild(on, candidate, hello.environment, source) : null;
    on.releaseBuild = await lane.builds.acquire(options.signal);
    const reservation = on.reservation;
    emit({ kind: 'build-started', device, buildKey: key, previouslyBuilt: reservation?.previouslyBuilt ?? false, waitedMs: performance.now() - askedAtMs });
    const candidatePid = candidate.worker.pid;
    if (candidatePid !== undefined) this.#pauser.add(candidatePid);
    return {
      buildDirectory: reservation?.directory ?? candidate.scratch.buildDirectory,
      buildFinished: (report: BuildReport) => {
        on.releaseBuild?.();
        if (candidatePid !== undefined) this.#pauser.remove(candidatePid);
        if (reservation?.previouslyBuilt && report.built && report.cacheHit === false) {
          // The cached copy was restored and checked, yet the build compiled again (ninja found it
          // out of date): the cache is not saving this candidate's build time.
          this.#logger.warn({ key, durationMs: report.durationMs }, 'a cached build was restored but the candidate compiled again');
        }
        on.recording = reservation?.record(report).catch((error: unknown) => this.#logger.warn({ err: error, key }, 'could not record a build cache entry'));
        emit({ kind: 'build-finished', device, buildKey: key, built: report.built, cacheHit: report.cacheHit, durationMs: report.durationMs });
      },
      acquireDevice: () => this.#acquireDevice(lane, device, options.signal, emit, on.room, 0, candidate.contextBytes),
    };
  }

  /** The candidate's build cache entry, keyed by its source, backend, machine and compiler; returns the key. */
  async #reserveBuild(on: OnDevice, candidate: WarmWorker, environment: WorkerEnvironment, source: Buffer): Promise<string> {
    const material = buildKeyMaterialOf({
      sourceSha256: createHash('sha256').update(source).digest('hex'),
      backend: on.settings.backend,
      environment,
      compiler: await this.#compilerIdentity(),
      parentEnvironment: this.#environment,
    });
    const key = buildKey(material);
    const workspace = { directory: candidate.scratch.buildDirectory, ownerUid: isolationOf(environment)?.uid ?? null };
    on.reservation = await this.#options.buildCache.reserve(key, material, workspace, on.options.signal);
    return key;
  }

  /** Ends an evaluation's workers and removes their scratch; a new build enters the cache once its candidate is gone. */
  async #discardTaken(on: OnDevice): Promise<void> {
    await on.recording;
    await Promise.all(
      on.taken.map(async (warm) => {
        if (warm.worker.pid !== undefined) this.#pauser.remove(warm.worker.pid);
        try {
          await warm.worker.finish(EXIT_WINDOW_MS);
        } finally {
          // A new build is copied into the cache only now that the candidate's processes are gone.
          if (warm.worker.role === 'candidate') {
            await on.reservation?.release().catch((error: unknown) => this.#logger.warn({ err: error }, 'could not record a build cache entry'));
          }
        }
        await warm.scratch.remove();
      }),
    );
  }

  /**
   * One evaluation's pauses of background work (builds, warm-ups) during its timed stages (a
   * candidate's timed calls, the reference's baselines): on the cpu, where the timed device is the
   * CPU itself, and on a GPU when asked. `onProgress` sees its stage events; `resume` when it ends.
   */
  #timedStagePauses(lane: PipelineLane): { onProgress: (event: EvaluationProgress) => void; resume: () => void } {
    const pauses = lane.kind === 'cpu' || this.#options.pauseBuildsDuringGpuTiming === true;
    let resumeBackground: (() => void) | undefined;
    return {
      onProgress: (event) => {
        const timed = event.role === 'reference' ? event.stage === 'baseline' : event.stage === 'timing';
        if (!pauses || !timed) return;
        if (event.kind === 'stage-started') resumeBackground = this.#pauser.pause();
        else resumeBackground?.();
      },
      resume: () => resumeBackground?.(),
    };
  }

  /** The device for this evaluation alone (device-lease.ts); {@link close} waits for its release. */
  #acquireDevice(
    lane: PipelineLane,
    device: string,
    signal: AbortSignal | undefined,
    emit: (event: PipelineEvent) => void,
    room: PreparedRoom,
    priority = 0,
    heldBytes = 0,
  ): Promise<HeldDevice> {
    const host = { directory: this.#options.deviceLockDirectory, visibleDevices: this.#environment.CUDA_VISIBLE_DEVICES, releasing: this.#releasing };
    return leaseDevice({ lane, device, signal, emit, room, priority, heldBytes }, host);
  }

  #lane(kind: LaneKind): Promise<PipelineLane> {
    let lane = this.#lanes.get(kind);
    if (!lane) {
      lane = createPipelineLane(kind, { cudaDevices: this.#options.cudaDevices, sizing: this.#options.sizing, environment: this.#environment }).then(
        (created) => {
          for (const device of created.devices.devices) {
            this.#sizingOfDevice.set(device, created.sizing);
            this.#pool.prewarm('candidate', device);
            this.#pool.prewarm('reference', device);
          }
          return created;
        },
      );
      // A lane that could not be made (no GPU) is tried again by the next evaluation.
      lane.catch(() => this.#lanes.delete(kind));
      this.#lanes.set(kind, lane);
    }
    return lane;
  }

  #bytecodeCache(): Promise<string | null> {
    this.#bytecodePrefix ??= prepareBytecodeCache({
      python: this.#options.python ?? 'python3',
      workerDirectory: this.#options.workerDirectory,
      directory: this.#options.bytecodeCacheDirectory ?? path.join(path.dirname(this.#options.buildCache.directory), 'pycache'),
      environment: this.#environment,
      logger: this.#logger,
    }).catch((error: unknown) => {
      this.#logger.warn({ err: error }, 'bytecode cache: not prepared; workers compile their modules from source');
      return null;
    });
    return this.#bytecodePrefix;
  }

  #compilerIdentity(): Promise<string | null> {
    this.#compiler ??= (this.#options.compilerIdentity ?? (() => probeCompilerIdentity(this.#environment)))();
    return this.#compiler;
  }
}
