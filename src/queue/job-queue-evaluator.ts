import { randomUUID } from 'node:crypto';
import { EvaluationCancelledError } from '../eval/evaluation-cancelled-error.js';
import type { EvaluateOptions, Evaluation, EvaluationRequest, Evaluator } from '../eval/evaluator.js';
import type { JobQueue } from './job-queue.js';

export interface JobQueueEvaluatorOptions {
  /** Ids of the jobs it submits. Default: random UUIDs. */
  createJobId?: () => string;
  /**
   * Jobs at once, read again whenever one ends and on {@link JobQueueEvaluator.refresh} (at least 1
   * is used); the rest wait here, in order. Default: no bound (every job goes to the queue at once).
   */
  slots?: () => number;
}

interface Waiter {
  start: () => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/**
 * The {@link Evaluator} over a {@link JobQueue}, the transport of a remote evaluation: `evaluate`
 * submits the request (a BullmqJobQueue reads the two files at the request's paths into the job's
 * payload) and returns its result; progress and pipeline events of the job reach `onProgress` and
 * `onPipelineEvent`. The queue's workers time one candidate per device, so the Evaluator's contract
 * holds across machines. With `slots` (`kforge optimize --redis`: the devices of the connected
 * workers, or `--remote-slots`), at most that many jobs are in the queue at once.
 *
 * The usage: `waitedMs` is the wait here for a slot plus the queue's wait for a worker, `heldMs` the
 * job's time on its worker as the queue reports it (0 for a result stored before this submission),
 * `device` the one the result names (else `remote`). The request's `deviceIndex` does not travel:
 * the worker that takes the job uses its own device.
 *
 * @example
 * const evaluator = new JobQueueEvaluator(await openRedisJobQueue({ url }));
 * const { result } = await evaluator.evaluate(request);
 */
export class JobQueueEvaluator implements Evaluator {
  readonly #queue: JobQueue;
  readonly #createJobId: () => string;
  readonly #slots: (() => number) | undefined;
  readonly #waiters: Waiter[] = [];
  #running = 0;

  constructor(queue: JobQueue, options: JobQueueEvaluatorOptions = {}) {
    this.#queue = queue;
    this.#createJobId = options.createJobId ?? randomUUID;
    this.#slots = options.slots;
  }

  /** Evaluations waiting here or in the queue now. */
  get pending(): number {
    return this.#running + this.#waiters.length;
  }

  async evaluate(request: EvaluationRequest, options: EvaluateOptions = {}): Promise<Evaluation> {
    const askedAtMs = performance.now();
    await this.#slot(options.signal);
    try {
      const waitedHereMs = performance.now() - askedAtMs;
      const jobId = this.#createJobId();
      let waitedMs = 0;
      let durationMs = 0;
      const unsubscribe = [
        this.#queue.on('job-started', (event) => {
          if (event.jobId === jobId) waitedMs = event.waitedMs;
        }),
        this.#queue.on('job-finished', (event) => {
          if (event.jobId === jobId) durationMs = event.durationMs;
        }),
        this.#queue.on('job-progress', (event) => void (event.jobId === jobId && options.onProgress?.(event.progress))),
        this.#queue.on('job-pipeline', (event) => void (event.jobId === jobId && options.onPipelineEvent?.(event.event))),
      ];
      try {
        const result = await this.#queue.submit(request, { jobId, ...(options.signal ? { signal: options.signal } : {}) });
        return { result, usage: { device: result.environment?.device ?? 'remote', waitedMs: waitedHereMs + waitedMs, heldMs: durationMs } };
      } finally {
        for (const remove of unsubscribe) remove();
      }
    } finally {
      this.#running -= 1;
      this.refresh();
    }
  }

  /** Starts waiting evaluations while slots are free (call when the slot count may have grown). */
  refresh(): void {
    while (this.#waiters.length > 0 && this.#running < this.#limit()) {
      const waiter = this.#waiters.shift()!;
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      this.#running += 1;
      waiter.start();
    }
  }

  #limit(): number {
    return this.#slots ? Math.max(1, this.#slots()) : Number.POSITIVE_INFINITY;
  }

  #slot(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason ?? new EvaluationCancelledError());
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: resolve,
        signal,
        onAbort: () => {
          const index = this.#waiters.indexOf(waiter);
          if (index >= 0) this.#waiters.splice(index, 1);
          reject(signal?.reason ?? new EvaluationCancelledError());
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#waiters.push(waiter);
      this.refresh();
    });
  }
}
