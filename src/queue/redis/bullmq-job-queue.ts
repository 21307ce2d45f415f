/**
 * Longer than convention 4's 300 lines: `BullmqJobQueue` is one client's state machine: its job
 * watches, lane listeners, polling and settlement share the watches and the idle timer, and a job's
 * way from submission to its one outcome (settled, failed, abandoned, cancelled) runs through them all.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import type { Backend, EvaluationResult } from '../../core/verdict.js';
import { BullmqLanes, type LaneJobCounts } from './bullmq-lanes.js';
import { requestOfNames, resultForSubmitter, type FinishedEvaluationJob, type JobWatch, type Submitter } from './bullmq-job-watch.js';
import { EvaluationCancelledError } from '../../eval/evaluation-cancelled-error.js';
import { BullmqJobOperations } from './bullmq-job-operations.js';
import { jobProgressSchema, type EvaluationJobOutcome } from '../evaluation-job-messages.js';
import { evaluationJobId, evaluationJobPayloadSchema, MAX_ATTEMPTS_LIMIT, readJobPayload, type EvaluationJobPayload } from '../evaluation-job-payload.js';
import type { EvaluationRequest } from '../../eval/evaluator.js';
import { JobQueueClosedError } from '../job-queue-closed-error.js';
import type { JobQueue, JobQueueCounts, JobQueueEventName, JobQueueEvents, JobSubmitOptions } from '../job-queue.js';
import { JobQueueListeners } from '../job-queue-listeners.js';
import type { LaneKind } from '../../eval/pipeline/pipeline-lane.js';
import { connectRedis, quitRedis } from './redis-connection.js';
import { bullmqQueueName, DEFAULT_QUEUE_NAME, laneOfBackend, queueRedisKeys } from './redis-keys.js';
import { listWorkerHeartbeats, workerSlots, type WorkerHeartbeat } from './queue-worker-heartbeat.js';
export type { FinishedEvaluationJob } from './bullmq-job-watch.js';
export type { LaneJobCounts } from './bullmq-lanes.js';

/** How long finished jobs and their results stay in Redis by default: 7 days, in seconds. */
export const DEFAULT_KEEP_RESULTS_SECONDS = 7 * 24 * 3600;
const DEFAULT_POLL_INTERVAL_MS = 1000;

export interface BullmqJobQueueOptions {
  /** `redis://host:port` (or `rediss://`). */
  url: string;
  /** The queue name the workers serve (`--queue`). Default `kforge`. */
  queueName?: string;
  logger?: Logger;
  /** Starts of a job whose worker died before it ends `crashed`, written into each job. Default 3. */
  maxAttempts?: number;
  /** Interval between checks of every pending job's state (besides BullMQ's events), in ms. Default 1000. */
  pollIntervalMs?: number;
  /** How long finished jobs (their results) are kept, in seconds. Default 7 days. */
  keepResultsSeconds?: number;
  /** Limit on the first connection, in ms. */
  connectTimeoutMs?: number;
  now?: () => number;
  createJobId?: () => string;
  onListenerError?: (error: unknown, event: JobQueueEventName) => void;
}

/**
 * The {@link JobQueue} of the coordinator side on Redis with BullMQ: a job carries the problem and
 * candidate sources, its id is their content hash (equal requests share one job and one stored
 * result), workers anywhere evaluate it (`kforge worker`). Results are awaited through BullMQ's
 * events and a poll of every pending job's state, so a Redis restart or a lost event loses no
 * result; a job that vanished from Redis is added again.
 *
 * @example
 * const queue = await openRedisJobQueue({ url: 'redis://127.0.0.1:6379' });
 * const result = await queue.submit({ problemPath, candidatePath, backend: 'cpu', precision: 'fp32', tolerance: 'kernelbench' });
 * await queue.close();
 */
export class BullmqJobQueue implements JobQueue {
  readonly queueName: string;
  readonly #options: BullmqJobQueueOptions;
  readonly #redis: Redis;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #lanes: BullmqLanes;
  readonly #operations: BullmqJobOperations;
  readonly #listeners: JobQueueListeners;
  readonly #watches = new Map<string, JobWatch>();
  readonly #idle = new Set<() => void>();
  readonly #cancelling = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #finished = 0;
  #failed = 0;
  #closed = false;

  private constructor(options: BullmqJobQueueOptions, redis: Redis) {
    this.#options = options;
    this.#redis = redis;
    this.queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
    this.#logger = options.logger ?? pino({ level: 'silent' });
    this.#now = options.now ?? (() => performance.now());
    this.#lanes = new BullmqLanes({ url: options.url, queueName: this.queueName, logger: this.#logger });
    this.#listeners = new JobQueueListeners(options.onListenerError);
    this.#operations = new BullmqJobOperations({
      lanes: this.#lanes,
      redis,
      keys: queueRedisKeys(this.queueName),
      logger: this.#logger,
      keepResultsSeconds: options.keepResultsSeconds ?? DEFAULT_KEEP_RESULTS_SECONDS,
    });
  }

  /** Connects to Redis; throws `RedisUnreachableError` when it does not answer. */
  static async open(options: BullmqJobQueueOptions): Promise<BullmqJobQueue> {
    const { maxAttempts } = options;
    if (maxAttempts !== undefined && (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > MAX_ATTEMPTS_LIMIT)) {
      throw new RangeError(`expected \`maxAttempts\` to be an integer from 1 to ${MAX_ATTEMPTS_LIMIT}, got ${maxAttempts}`);
    }
    const redis = await connectRedis(options.url, { connectTimeoutMs: options.connectTimeoutMs, connectionName: 'kforge-coordinator' });
    return new BullmqJobQueue(options, redis);
  }

  /** Reads the request's two files into a payload and submits it; the result names the request's paths. */
  async submit(request: EvaluationRequest, options: JobSubmitOptions = {}): Promise<EvaluationResult> {
    if (this.#closed) throw new JobQueueClosedError();
    const read = await readJobPayload(request, this.#options.maxAttempts);
    if ('result' in read) return read.result;
    return (await this.#submit(read.payload, request, false, options)).result;
  }

  /** Submits a payload whose sources the caller holds (the reward API); the result names the payload's names. */
  submitPayload(payload: EvaluationJobPayload, options: JobSubmitOptions = {}): Promise<FinishedEvaluationJob> {
    const parsed = evaluationJobPayloadSchema.safeParse(payload);
    if (!parsed.success)
      return Promise.reject(
        new RangeError(`expected an evaluation job payload: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`),
      );
    return this.#submit(parsed.data, requestOfNames(parsed.data), true, options);
  }

  on<E extends JobQueueEventName>(event: E, listener: (payload: JobQueueEvents[E]) => void): () => void {
    return this.#listeners.on(event, listener);
  }

  /** This coordinator's submissions by state (the whole queue: {@link queueCounts}). */
  counts(): JobQueueCounts {
    let waiting = 0;
    let running = 0;
    for (const watch of this.#watches.values()) {
      for (const submitter of watch.submitters) {
        if (submitter.startedAtMs === null) waiting += 1;
        else running += 1;
      }
    }
    return { waiting, running, finished: this.#finished, failed: this.#failed };
  }

  /** BullMQ's counts of both lanes' queues, for every coordinator and worker. */
  queueCounts(): Promise<Record<LaneKind, LaneJobCounts>> {
    return this.#lanes.counts();
  }

  /** The workers alive now (their heartbeats). */
  workers(): Promise<WorkerHeartbeat[]> {
    return listWorkerHeartbeats(this.#redis, this.queueName);
  }

  /** Evaluations the live workers of a backend's lane run at once (0 when none is connected). */
  async slots(backend: Backend): Promise<number> {
    return workerSlots(await this.workers(), bullmqQueueName(this.queueName, laneOfBackend(backend)));
  }

  async close(options: { cancel?: boolean } = {}): Promise<void> {
    this.#closed = true;
    if (options.cancel) {
      for (const watch of [...this.#watches.values()])
        for (const submitter of [...watch.submitters]) this.#abandon(watch, submitter, new JobQueueClosedError());
    }
    if (this.#watches.size > 0) await new Promise<void>((resolve) => this.#idle.add(resolve));
    await Promise.all(this.#cancelling);
    clearInterval(this.#timer);
    await this.#lanes.close();
    await quitRedis(this.#redis);
  }

  #submit(payload: EvaluationJobPayload, request: EvaluationRequest, names: boolean, options: JobSubmitOptions): Promise<FinishedEvaluationJob> {
    if (this.#closed) return Promise.reject(new JobQueueClosedError());
    if (options.signal?.aborted) return Promise.reject(new EvaluationCancelledError(options.signal.reason));
    const jobId = evaluationJobId(payload);
    return new Promise<FinishedEvaluationJob>((resolve, reject) => {
      let watch = this.#watches.get(jobId);
      const fresh = !watch;
      if (!watch) {
        watch = {
          jobId,
          lane: laneOfBackend(payload.options.backend),
          payload,
          submitters: new Set(),
          enqueuing: false,
          checking: false,
          recheck: false,
          reused: false,
          holding: null,
        };
        this.#watches.set(jobId, watch);
      }
      const owner = watch;
      const submitter: Submitter = {
        localId: options.jobId ?? this.#options.createJobId?.() ?? randomUUID(),
        request,
        submittedAtMs: this.#now(),
        startedAtMs: null,
        signal: options.signal,
        onAbort: () => this.#abandon(owner, submitter, options.signal?.reason),
        names,
        resolve,
        reject,
      };
      watch.submitters.add(submitter);
      options.signal?.addEventListener('abort', submitter.onAbort, { once: true });
      this.#emit('job-queued', { jobId: submitter.localId, request });
      this.#listen(watch.lane);
      this.#timer ??= setInterval(() => this.#pollAll(), this.#options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
      if (fresh) void this.#enqueue(watch, true);
      else void this.#check(watch);
    });
  }

  /** Adds the job; a failure to reach Redis is left to the next poll (the job is then `gone`). */
  async #enqueue(watch: JobWatch, first: boolean): Promise<void> {
    if (watch.enqueuing) return;
    watch.enqueuing = true;
    try {
      const { completedAlready } = await this.#operations.add(watch);
      if (first && completedAlready) watch.reused = true;
    } catch (error) {
      this.#logger.warn({ err: error, jobId: watch.jobId }, 'could not add the job yet (Redis unreachable?); the next poll tries again');
    } finally {
      watch.enqueuing = false;
    }
    await this.#check(watch);
  }

  /** Looks at the job's state and acts on it; checks of one job never overlap. */
  async #check(watch: JobWatch): Promise<void> {
    if (watch.checking) {
      watch.recheck = true;
      return;
    }
    watch.checking = true;
    try {
      do {
        watch.recheck = false;
        if (this.#watches.get(watch.jobId) !== watch) return;
        const found = await this.#operations.inspect(watch);
        if (found.kind === 'active') this.#markStarted(watch);
        if (found.kind === 'gone' && !watch.enqueuing) {
          this.#logger.warn({ jobId: watch.jobId }, 'the job is not in Redis; adding it again');
          void this.#enqueue(watch, false);
        }
        if (found.kind === 'finished') this.#settle(watch, found.outcome);
        if (found.kind === 'failed') this.#fail(watch, found.error);
      } while (watch.recheck);
    } catch (error) {
      this.#logger.debug({ err: error, jobId: watch.jobId }, 'could not check the job (Redis unreachable?); the next poll tries again');
    } finally {
      watch.checking = false;
    }
  }

  #fail(watch: JobWatch, error: Error): void {
    this.#finish(watch, (submitter) => {
      this.#failed += 1;
      this.#emit('job-failed', { jobId: submitter.localId, error, durationMs: this.#now() - (submitter.startedAtMs ?? submitter.submittedAtMs) });
      submitter.reject(error);
    });
  }

  #settle(watch: JobWatch, outcome: EvaluationJobOutcome): void {
    this.#finish(watch, (submitter) => {
      this.#finished += 1;
      const result = resultForSubmitter(outcome.result, submitter);
      this.#emit('job-finished', { jobId: submitter.localId, result, durationMs: watch.reused ? 0 : outcome.durationMs });
      submitter.resolve({ ...outcome, result, jobId: watch.jobId, reused: watch.reused });
    });
  }

  /** Ends the watch: each submitter in turn, then wakes `close` when nothing is pending. */
  #finish(watch: JobWatch, each: (submitter: Submitter) => void): void {
    this.#watches.delete(watch.jobId);
    for (const submitter of watch.submitters) {
      submitter.signal?.removeEventListener('abort', submitter.onAbort);
      each(submitter);
    }
    watch.submitters.clear();
    this.#wakeIfIdle();
  }

  #markStarted(watch: JobWatch): void {
    for (const submitter of watch.submitters) {
      if (submitter.startedAtMs !== null) continue;
      submitter.startedAtMs = this.#now();
      this.#emit('job-started', { jobId: submitter.localId, waitedMs: submitter.startedAtMs - submitter.submittedAtMs });
      if (watch.holding) this.#emit('job-pipeline', { jobId: submitter.localId, event: watch.holding });
    }
  }

  /** A submitter gave up (its signal, or `close({ cancel })`); the job itself is cancelled once nobody here waits for it. */
  #abandon(watch: JobWatch, submitter: Submitter, reason: unknown): void {
    if (!watch.submitters.delete(submitter)) return;
    submitter.signal?.removeEventListener('abort', submitter.onAbort);
    const error = new EvaluationCancelledError(reason);
    this.#failed += 1;
    this.#emit('job-failed', { jobId: submitter.localId, error, durationMs: submitter.startedAtMs === null ? 0 : this.#now() - submitter.startedAtMs });
    submitter.reject(error);
    if (watch.submitters.size > 0) return;
    this.#watches.delete(watch.jobId);
    this.#wakeIfIdle();
    const cancelling = this.#cancelRemote(watch).finally(() => this.#cancelling.delete(cancelling));
    this.#cancelling.add(cancelling);
  }

  async #cancelRemote(watch: JobWatch): Promise<void> {
    try {
      await this.#operations.cancel(watch);
    } catch (error) {
      this.#logger.warn({ err: error, jobId: watch.jobId }, 'could not cancel the job in Redis');
    }
  }

  #pollAll(): void {
    for (const watch of this.#watches.values()) void this.#check(watch);
  }

  #wakeIfIdle(): void {
    if (this.#watches.size > 0) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    for (const resolve of this.#idle) resolve();
    this.#idle.clear();
  }

  /** BullMQ's events make state changes show at once; the poll is the safety net. */
  #listen(lane: LaneKind): void {
    this.#lanes.listen(lane, {
      active: (jobId) => {
        const watch = this.#watches.get(jobId);
        if (watch) this.#markStarted(watch);
      },
      finished: (jobId) => {
        const watch = this.#watches.get(jobId);
        if (watch) void this.#check(watch);
      },
      progress: (jobId, data) => this.#relayProgress(jobId, data),
    });
  }

  #relayProgress(jobId: string, data: unknown): void {
    const watch = this.#watches.get(jobId);
    const parsed = jobProgressSchema.safeParse(data);
    if (!watch || !parsed.success) return;
    this.#markStarted(watch);
    if (parsed.data.kind === 'pipeline') {
      const event = parsed.data.event;
      if (event.kind === 'device-acquired') watch.holding = event;
      if (event.kind === 'device-released') watch.holding = null;
    }
    for (const submitter of watch.submitters) {
      if (parsed.data.kind === 'stage') this.#emit('job-progress', { jobId: submitter.localId, progress: parsed.data.progress });
      else this.#emit('job-pipeline', { jobId: submitter.localId, event: parsed.data.event });
    }
  }

  #emit<E extends JobQueueEventName>(event: E, payload: JobQueueEvents[E]): void {
    this.#listeners.emit(event, payload);
  }
}

/** Options of {@link openRedisJobQueue}: `url`, and optionally `queueName`, `logger`, `maxAttempts`… */
export type OpenRedisJobQueueOptions = BullmqJobQueueOptions;

/**
 * A connected {@link BullmqJobQueue}, for the CLI and the reward API. Throws
 * `RedisUnreachableError` (its message says how to start a Redis) when nothing answers at `url`.
 */
export function openRedisJobQueue(options: OpenRedisJobQueueOptions): Promise<BullmqJobQueue> {
  return BullmqJobQueue.open(options);
}
