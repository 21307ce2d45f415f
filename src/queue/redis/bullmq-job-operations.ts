import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { BullmqLanes } from './bullmq-lanes.js';
import type { JobWatch } from './bullmq-job-watch.js';
import { decodeJobFailure, evaluationJobOutcomeSchema, type EvaluationJobOutcome, type JobFailure } from '../evaluation-job-messages.js';
import { EvaluatorSetupError } from '../../eval/evaluator-setup-error.js';
import { MachineFaultError } from '../../eval/machine-fault-error.js';
import { readJobAttempts } from '../job-attempts.js';
import type { QueueRedisKeys } from './redis-keys.js';
import { workerLostResult } from './lost-job-result.js';

/** How long a cancellation request stays set, in ms. */
const CANCEL_TTL_MS = 24 * 3600 * 1000;

/** What a look at a job in Redis found. */
export type JobInspection =
  | { kind: 'waiting' }
  | { kind: 'active' }
  /** Not in Redis (never added, removed, or lost with Redis's data): add it again. */
  | { kind: 'gone' }
  | { kind: 'finished'; outcome: EvaluationJobOutcome }
  /** Failed for a reason of kforge's (a setup fault, an internal error): the submissions reject. */
  | { kind: 'failed'; error: Error }
  /** Its stored end was not for this coordinator (cancelled by another one, unreadable): it was put back in the queue. */
  | { kind: 'retried' };

export interface BullmqJobOperationsOptions {
  lanes: BullmqLanes;
  redis: Redis;
  keys: QueueRedisKeys;
  logger: Logger;
  /** How long finished jobs are kept, in seconds. */
  keepResultsSeconds: number;
}

/** The coordinator's operations on one job in Redis: add, look, retry, cancel. */
export class BullmqJobOperations {
  readonly #options: BullmqJobOperationsOptions;

  constructor(options: BullmqJobOperationsOptions) {
    this.#options = options;
  }

  /**
   * Adds the job (a no-op when a job of this id exists: it is one job). One that failed earlier
   * (cancelled, or a setup fault) is retried with its attempts cleared.
   *
   * @returns whether the job had completed already (its stored result is reused).
   */
  async add(watch: JobWatch): Promise<{ completedAlready: boolean }> {
    const { lanes, redis, keys, keepResultsSeconds } = this.#options;
    const queue = lanes.queue(watch.lane);
    await redis.del(keys.cancel(watch.jobId));
    const keep = { age: keepResultsSeconds };
    await queue.add('evaluate', watch.payload, { jobId: watch.jobId, removeOnComplete: keep, removeOnFail: keep, attempts: 1 });
    const state = await queue.getJobState(watch.jobId);
    if (state === 'failed') await this.retry(watch, 'failed');
    return { completedAlready: state === 'completed' };
  }

  /** Puts a finished job back in the queue, its attempts and any cancellation cleared. */
  async retry(watch: JobWatch, state: 'failed' | 'completed'): Promise<void> {
    const { lanes, redis, keys, logger } = this.#options;
    await redis.del(keys.cancel(watch.jobId), keys.attempts(watch.jobId));
    const job = await lanes.queue(watch.lane).getJob(watch.jobId);
    await job?.retry(state).catch((error: unknown) => logger.debug({ err: error, jobId: watch.jobId }, 'the retry raced with another coordinator'));
  }

  async inspect(watch: JobWatch): Promise<JobInspection> {
    const { lanes, redis, keys, logger } = this.#options;
    const queue = lanes.queue(watch.lane);
    const state = await queue.getJobState(watch.jobId);
    if (state === 'unknown') return { kind: 'gone' };
    if (state === 'active') return { kind: 'active' };
    if (state !== 'completed' && state !== 'failed') return { kind: 'waiting' };
    const job = await queue.getJob(watch.jobId);
    if (!job) return { kind: 'gone' };
    if (state === 'completed') {
      const outcome = evaluationJobOutcomeSchema.safeParse(job.returnvalue);
      if (outcome.success) return { kind: 'finished', outcome: outcome.data };
      logger.warn({ jobId: watch.jobId, issue: outcome.error.issues[0] }, 'the stored result is not one this version reads; evaluating again');
      await this.retry(watch, 'completed');
      return { kind: 'retried' };
    }
    const failure = decodeJobFailure(job.failedReason);
    if (failure.kind === 'cancelled') {
      // Another coordinator cancelled it; this one still waits for it.
      await this.retry(watch, 'failed');
      return { kind: 'retried' };
    }
    if (failure.kind === 'internal' && /stalled more than/i.test(failure.message)) {
      const attempts = await readJobAttempts(redis, keys.attempts(watch.jobId));
      return {
        kind: 'finished',
        outcome: { v: 1, result: workerLostResult(watch.payload, attempts), workerId: 'bullmq-stall-limit', host: 'redis', attempts, durationMs: 0 },
      };
    }
    return { kind: 'failed', error: failureError(watch.jobId, failure) };
  }

  /** Removes a waiting job; a running one is marked cancelled (its worker stops it at its next heartbeat). */
  async cancel(watch: JobWatch): Promise<void> {
    const { lanes, redis, keys } = this.#options;
    const queue = lanes.queue(watch.lane);
    const state = await queue.getJobState(watch.jobId);
    if (state === 'completed' || state === 'failed' || state === 'unknown') return;
    if (state !== 'active' && (await queue.remove(watch.jobId)) === 1) return;
    await redis.set(keys.cancel(watch.jobId), '1', 'PX', CANCEL_TTL_MS);
  }
}

/** The error a submission rejects with for a job its worker failed: the worker's own kind where it has one. */
function failureError(jobId: string, failure: JobFailure): Error {
  if (failure.kind === 'setup') return new EvaluatorSetupError(failure.message, failure.hint ? { hint: failure.hint } : {});
  if (failure.kind === 'machine' && failure.machine) {
    const { resource, role, stage, retryAfterSeconds } = failure.machine;
    return new MachineFaultError(failure.message, {
      resource,
      ...(role ? { role } : {}),
      stage,
      hint: failure.hint ?? '',
      retryAfterSeconds,
    });
  }
  return new Error(`the evaluation job ${jobId} failed: ${failure.message}`);
}
