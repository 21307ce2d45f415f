import type { EvaluationQueue, QueuedEvaluation } from '../agent/evaluation-queue.js';
import { EvaluationCancelledError } from '../eval/evaluation-cancelled-error.js';
import type { EvaluateOptions, EvaluationRequest } from '../eval/evaluator.js';
import type { QueuedEvaluationResult } from '../eval/job-queue-evaluator.js';

/** The evaluator a {@link RemoteEvaluationQueue} sends requests to (a JobQueueEvaluator). */
export interface TimedEvaluator {
  evaluateTimed(request: EvaluationRequest, options?: EvaluateOptions): Promise<QueuedEvaluationResult>;
}

export interface RemoteEvaluationQueueOptions {
  evaluator: TimedEvaluator;
  /** Evaluations at once now; read again whenever one ends and on {@link RemoteEvaluationQueue.refresh}. At least 1 is used. */
  slots: () => number;
}

interface Waiter {
  start: () => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/**
 * The {@link EvaluationQueue} of `kforge optimize --redis`: requests go to the Redis queue's
 * workers, at most `slots()` at once (the devices of the connected workers, or `--remote-slots`),
 * the rest waiting here in order. Each worker times one candidate per device, so the queue's
 * contract (never two timings on one device) holds across machines. `deviceMs` is the job's
 * time on its worker; `device` the one the result names.
 */
export class RemoteEvaluationQueue implements EvaluationQueue {
  readonly #options: RemoteEvaluationQueueOptions;
  readonly #waiters: Waiter[] = [];
  #running = 0;

  constructor(options: RemoteEvaluationQueueOptions) {
    this.#options = options;
  }

  get pending(): number {
    return this.#running + this.#waiters.length;
  }

  async submit(request: EvaluationRequest, options: EvaluateOptions = {}): Promise<QueuedEvaluation> {
    const askedAtMs = performance.now();
    await this.#slot(options.signal);
    try {
      const waitedHereMs = performance.now() - askedAtMs;
      const { result, waitedMs, durationMs } = await this.#options.evaluator.evaluateTimed(request, options);
      return { result, deviceMs: durationMs, waitedMs: waitedHereMs + waitedMs, device: result.environment?.device ?? 'remote' };
    } finally {
      this.#running -= 1;
      this.refresh();
    }
  }

  /** Starts waiting requests while slots are free (call when the slot count may have grown). */
  refresh(): void {
    while (this.#waiters.length > 0 && this.#running < Math.max(1, this.#options.slots())) {
      const waiter = this.#waiters.shift()!;
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      this.#running += 1;
      waiter.start();
    }
  }

  #slot(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason ?? new EvaluationCancelledError());
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: resolve,
        reject,
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
