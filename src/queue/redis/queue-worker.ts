import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import type { Backend, Verdict } from '../../core/verdict.js';
import { ActiveJobs } from './active-jobs.js';
import { createEvaluationJobProcessor, type EvaluationJobProcessorOptions } from './evaluation-job-processor.js';
import { MAX_ATTEMPTS_LIMIT } from '../evaluation-job-payload.js';
import { connectRedis, quitRedis, redactRedisUrl, redisConnectionOptions, settleWithin } from './redis-connection.js';
import { RedisDeviceLocks } from './redis-device-locks.js';
import { bullmqQueueName, DEFAULT_QUEUE_NAME, laneOfBackend, queueRedisKeys } from './redis-keys.js';
import { removeWorkerHeartbeat, writeWorkerHeartbeat, type WorkerHeartbeat } from './queue-worker-heartbeat.js';

/** Default stall timeout: a job whose worker stops renewing its lock this long is given to another worker (ms). */
export const DEFAULT_STALL_TIMEOUT_MS = 30_000;
/** Default interval between two heartbeats (and device lock renewals), in ms. */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 5000;
/** How long a worker waits on Redis for its bookkeeping (locks, heartbeat) at a job's end or at shutdown, in ms. */
const REDIS_WAIT_MS = 3000;

/** What a worker reports while it runs (the CLI prints these on stderr). */
export type QueueWorkerEvent =
  | { kind: 'ready'; workerId: string; queue: string; devices: readonly string[]; concurrency: number }
  | { kind: 'job-started'; jobId: string; candidate: string; attempt: number }
  | { kind: 'job-ended'; jobId: string; verdict: Verdict | null }
  | { kind: 'devices-lost'; devices: readonly string[] }
  | { kind: 'stopping'; returning: boolean; activeJobs: number }
  | { kind: 'error'; message: string };

export interface QueueWorkerOptions {
  redisUrl: string;
  /** The queue name shared with the coordinators. Default `kforge`. */
  queueName?: string;
  /** A worker takes the jobs of its backend's lane (`laneOfBackend`): a GPU backend's worker takes every GPU backend's jobs; a cpu worker cpu jobs. */
  backend: Backend;
  /** The devices evaluations run on as the evaluator names them (`cpu`, or `cuda:0`…). */
  devices: readonly string[];
  /** Host-wide names of the devices to lock (GPUs only; empty on the cpu backend). */
  deviceLocks: readonly string[];
  /** Jobs evaluated at once: one per GPU on the GPU backends. */
  concurrency: number;
  evaluator: EvaluationJobProcessorOptions['evaluator'] & { close?: () => Promise<void>; warmUp?: (backend: Backend) => Promise<unknown> };
  /** A job whose worker stops renewing its lock for this long is retried elsewhere (BullMQ `lockDuration`), ms. */
  stallTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  host?: string;
  workerId?: string;
  scratchRoot?: string;
  logger?: Logger;
  onEvent?: (event: QueueWorkerEvent) => void;
  /** Test hook, called once a start is recorded and before the evaluation (see docs/workers.md). */
  onAttemptStarted?: EvaluationJobProcessorOptions['onAttemptStarted'];
}

/**
 * A worker of the Redis queue: takes jobs of its lane (cpu or GPU) from BullMQ and evaluates
 * them with its evaluator, `concurrency` at once. It owns its GPUs through Redis locks (refusing
 * to start when another worker holds one), writes a heartbeat with TTL every few seconds,
 * cancels jobs a coordinator asks to cancel, and on {@link stop} finishes its jobs (or, with
 * `returnJobs`, gives them back to the queue uncounted).
 *
 * @example
 * const worker = await QueueWorker.start({ redisUrl, backend: 'cpu', devices: ['cpu'], deviceLocks: [], concurrency: 1, evaluator });
 * process.once('SIGTERM', () => void worker.stop());
 * await worker.stopped;
 */
export class QueueWorker {
  readonly id: string;
  readonly #options: QueueWorkerOptions;
  readonly #redis: Redis;
  readonly #locks: RedisDeviceLocks;
  readonly #active = new ActiveJobs();
  readonly #logger: Logger;
  readonly #heartbeat: WorkerHeartbeat;
  readonly #stopped: Promise<void>;
  #resolveStopped: () => void = () => undefined;
  #bullmq: Worker | undefined;
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  /** Set once the worker stopped taking jobs for good: no heartbeat is written after it. */
  #finished = false;
  #stopping: Promise<void> | undefined;

  private constructor(options: QueueWorkerOptions, redis: Redis, id: string) {
    this.id = id;
    this.#options = options;
    this.#redis = redis;
    this.#logger = options.logger ?? pino({ level: 'silent' });
    const host = options.host ?? os.hostname();
    const queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
    const intervalMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
    this.#locks = new RedisDeviceLocks({ redis, host, devices: options.deviceLocks, ownerId: id, ttlMs: 3 * intervalMs });
    const startedAt = new Date().toISOString();
    this.#heartbeat = {
      v: 1,
      id,
      host,
      pid: process.pid,
      queue: queueName,
      bullmqQueue: bullmqQueueName(queueName, laneOfBackend(options.backend)),
      backend: options.backend,
      devices: [...options.devices],
      deviceLocks: this.#locks.keys,
      concurrency: options.concurrency,
      state: 'ready',
      jobs: [],
      startedAt,
      updatedAt: startedAt,
      jobsDone: 0,
      jobsFailed: 0,
      intervalMs,
    };
    this.#stopped = new Promise((resolve) => (this.#resolveStopped = resolve));
  }

  /**
   * Connects, takes the device locks, writes the first heartbeat and starts taking jobs.
   * Throws `RedisUnreachableError` or `DeviceLockHeldError` (nothing is left behind then).
   */
  static async start(options: QueueWorkerOptions): Promise<QueueWorker> {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1)
      throw new RangeError(`expected \`concurrency\` to be a positive integer, got ${options.concurrency}`);
    const id = options.workerId ?? `${options.host ?? os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    const redis = await connectRedis(options.redisUrl, { connectionName: `kforge-worker-${id}` });
    const worker = new QueueWorker(options, redis, id);
    try {
      await worker.#locks.acquire();
      await worker.#beat();
    } catch (error) {
      await worker.#locks.release().catch(() => undefined);
      redis.disconnect();
      throw error;
    }
    worker.#run();
    return worker;
  }

  /** Resolves once the worker stopped (after {@link stop}, or after losing a device lock). */
  get stopped(): Promise<void> {
    return this.#stopped;
  }

  /** What the worker's heartbeat says now. */
  describe(): WorkerHeartbeat {
    return { ...this.#heartbeat, jobs: this.#active.describe(), updatedAt: new Date().toISOString() };
  }

  /**
   * Stops taking jobs and waits for those running to finish; called again (or with
   * `returnJobs`), gives the running jobs back to the queue unfinished. Then frees the device
   * locks, removes the heartbeat and closes the evaluator.
   */
  stop(options: { returnJobs?: boolean } = {}): Promise<void> {
    const returning = options.returnJobs === true || this.#stopping !== undefined;
    this.#emit({ kind: 'stopping', returning, activeJobs: this.#active.size });
    if (returning) this.#active.returnAll();
    this.#stopping ??= this.#shutdown();
    return this.#stopping;
  }

  #run(): void {
    const options = this.#options;
    const stallTimeoutMs = options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
    const processor = createEvaluationJobProcessor({
      evaluator: options.evaluator,
      redis: this.#redis,
      keys: queueRedisKeys(this.#heartbeat.queue),
      identity: { workerId: this.id, host: this.#heartbeat.host, pid: process.pid },
      active: this.#active,
      logger: this.#logger,
      scratchRoot: options.scratchRoot,
      onAttemptStarted: (started) => {
        this.#emit({ kind: 'job-started', jobId: started.jobId, candidate: started.payload.candidate.name, attempt: started.attempt.attempt.attempt });
        options.onAttemptStarted?.(started);
      },
      onJobEnded: async (jobId, verdict) => {
        if (verdict === null) this.#heartbeat.jobsFailed += 1;
        else this.#heartbeat.jobsDone += 1;
        this.#emit({ kind: 'job-ended', jobId, verdict });
        // The counts reach the heartbeat before the job's outcome reaches its coordinator.
        await settleWithin(this.#beatAfresh(), REDIS_WAIT_MS);
      },
    });
    this.#bullmq = new Worker(this.#heartbeat.bullmqQueue, processor, {
      connection: redisConnectionOptions(options.redisUrl),
      concurrency: options.concurrency,
      lockDuration: stallTimeoutMs,
      stalledInterval: Math.max(500, Math.floor(stallTimeoutMs / 2)),
      // The attempts bound is the payload's (the processor ends such a job `crashed`); BullMQ's own stall limit sits above every bound a payload may ask.
      maxStalledCount: MAX_ATTEMPTS_LIMIT + 5,
      runRetryDelay: 1000,
      name: this.id,
      autorun: false,
    });
    this.#bullmq.on('error', (error) => this.#logger.warn({ err: error }, 'BullMQ worker error (Redis unreachable?); it retries'));
    void this.#bullmq.run().catch((error: unknown) => this.#emit({ kind: 'error', message: error instanceof Error ? error.message : String(error) }));
    this.#timer = setInterval(() => void this.#beat(), this.#heartbeat.intervalMs);
    options.evaluator
      .warmUp?.(options.backend)
      .catch((error: unknown) =>
        this.#emit({ kind: 'error', message: `could not warm up the evaluator: ${error instanceof Error ? error.message : String(error)}` }),
      );
    this.#emit({
      kind: 'ready',
      workerId: this.id,
      queue: `${this.#heartbeat.bullmqQueue} at ${redactRedisUrl(options.redisUrl)}`,
      devices: options.devices,
      concurrency: options.concurrency,
    });
  }

  /** One heartbeat: renew the locks, pass on cancellations, write the heartbeat key. Joins the last one while it is still in flight. */
  #beat(): Promise<void> {
    if (this.#finished) return Promise.resolve();
    this.#beating ??= this.#beatOnce().finally(() => (this.#beating = undefined));
    return this.#beating;
  }

  /** A heartbeat written after this call: waits out one in flight (it may predate a change), then beats. */
  async #beatAfresh(): Promise<void> {
    await this.#beating;
    await this.#beat();
  }

  async #beatOnce(): Promise<void> {
    try {
      const lost = await this.#locks.renew();
      if (lost.length > 0) {
        this.#emit({ kind: 'devices-lost', devices: lost });
        void this.stop({ returnJobs: true });
      }
      const keys = queueRedisKeys(this.#heartbeat.queue);
      for (const jobId of this.#active.ids()) {
        if ((await this.#redis.exists(keys.cancel(jobId))) === 1) this.#active.get(jobId)?.cancelController.abort(new Error('a coordinator cancelled the job'));
      }
      if (!this.#finished) await writeWorkerHeartbeat(this.#redis, this.describe(), 3 * this.#heartbeat.intervalMs);
    } catch (error) {
      this.#logger.warn({ err: error }, 'could not write the heartbeat');
    }
  }

  async #shutdown(): Promise<void> {
    this.#heartbeat.state = 'stopping';
    void this.#beat();
    try {
      await this.#bullmq?.close();
    } finally {
      clearInterval(this.#timer);
      this.#finished = true;
      await settleWithin(this.#beating ?? Promise.resolve(), REDIS_WAIT_MS);
      // Redis may be down: the locks and the heartbeat then expire by themselves.
      await settleWithin(this.#locks.release(), REDIS_WAIT_MS);
      await settleWithin(removeWorkerHeartbeat(this.#redis, this.#heartbeat.queue, this.id), REDIS_WAIT_MS);
      await this.#options.evaluator.close?.();
      await quitRedis(this.#redis);
      this.#resolveStopped();
    }
  }

  #emit(event: QueueWorkerEvent): void {
    this.#options.onEvent?.(event);
  }
}
