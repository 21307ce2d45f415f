import { Semaphore } from '../../eval/locks/semaphore.js';
import { RewardBusyError } from './reward-busy-error.js';

export interface RewardAdmissionOptions {
  /** Evaluations handed to the job queue at once. */
  concurrency: number;
  /** Evaluations that may wait for one of those slots; past it requests are refused (429). */
  maxWaiting: number;
  /** Mean evaluation time assumed before any finished, in seconds. Default 10. */
  initialEvaluationSeconds?: number;
  /** Milliseconds clock (tests). */
  now?: () => number;
}

/** Bounds of `Retry-After`, in seconds. */
const RETRY_AFTER_MIN_S = 1;
const RETRY_AFTER_MAX_S = 300;

/**
 * The reward server's admission control: at most `concurrency` evaluations run through the job
 * queue at once, at most `maxWaiting` wait for a slot, and a request that would push past that is
 * refused at once with a {@link RewardBusyError} instead of piling up. `admit` and the `run` calls
 * it admits must happen in the same tick (no `await` between them), so no other request slips in.
 */
export class RewardAdmission {
  readonly concurrency: number;
  readonly maxWaiting: number;
  readonly #slots: Semaphore;
  readonly #now: () => number;
  /** Exponentially weighted mean of evaluation times, in seconds. */
  #meanSeconds: number;

  constructor(options: RewardAdmissionOptions) {
    for (const [name, value, minimum] of [
      ['concurrency', options.concurrency, 1],
      ['maxWaiting', options.maxWaiting, 0],
    ] as const) {
      if (!Number.isInteger(value) || value < minimum) throw new RangeError(`expected \`${name}\` to be an integer of at least ${minimum}, got ${value}`);
    }
    this.concurrency = options.concurrency;
    this.maxWaiting = options.maxWaiting;
    this.#slots = new Semaphore(options.concurrency);
    this.#now = options.now ?? (() => performance.now());
    this.#meanSeconds = options.initialEvaluationSeconds ?? 10;
  }

  /** Evaluations running and waiting now. */
  counts(): { running: number; waiting: number } {
    return { running: this.#slots.held, waiting: this.#slots.waiting };
  }

  /** The most evaluations one request can ever be admitted for: every slot plus every waiting place. */
  get capacity(): number {
    return this.concurrency + this.maxWaiting;
  }

  /**
   * Checks that `count` more evaluations fit.
   *
   * @throws RewardBusyError when more than `maxWaiting` would then wait.
   */
  admit(count: number): void {
    if (count <= 0) return;
    const free = this.#slots.waiting > 0 ? 0 : this.concurrency - this.#slots.held;
    const waitingAfter = this.#slots.waiting + Math.max(0, count - free);
    if (waitingAfter <= this.maxWaiting) return;
    const seconds = Math.ceil((waitingAfter / this.concurrency) * this.#meanSeconds);
    throw new RewardBusyError({
      retryAfterSeconds: Math.min(RETRY_AFTER_MAX_S, Math.max(RETRY_AFTER_MIN_S, seconds)),
      waiting: this.#slots.waiting,
      maxWaiting: this.maxWaiting,
      requested: count,
    });
  }

  /** Runs `task` in a slot once one is free (takes the slot synchronously when one is). */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.#slots.acquire(signal);
    const startedMs = this.#now();
    try {
      return await task();
    } finally {
      release();
      const seconds = (this.#now() - startedMs) / 1000;
      this.#meanSeconds = 0.8 * this.#meanSeconds + 0.2 * seconds;
    }
  }
}
