import { EvaluationCancelledError } from './evaluation-cancelled-error.js';

/** Gives back what {@link Semaphore.acquire} took; calling it twice does nothing. */
export type Release = () => void;

interface Waiter {
  grant: (release: Release) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/**
 * At most `permits` holders at once; the others wait in the order they asked. An abort while
 * waiting rejects with {@link EvaluationCancelledError} and takes nothing.
 *
 * @example
 * const builds = new Semaphore(4);
 * const release = await builds.acquire(signal);
 * try { await build(); } finally { release(); }
 */
export class Semaphore {
  readonly permits: number;
  #held = 0;
  readonly #waiters: Waiter[] = [];

  constructor(permits: number) {
    if (!Number.isInteger(permits) || permits < 1) {
      throw new RangeError(`expected the number of permits to be a positive integer, got ${permits}`);
    }
    this.permits = permits;
  }

  /** Holders now. */
  get held(): number {
    return this.#held;
  }

  /** Callers waiting now. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** Waits for a permit; the returned function gives it back. */
  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(new EvaluationCancelledError(signal.reason));
    if (this.#held < this.permits && this.#waiters.length === 0) {
      this.#held += 1;
      return Promise.resolve(this.#releaser());
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        grant: resolve,
        reject,
        signal,
        onAbort: () => {
          const index = this.#waiters.indexOf(waiter);
          if (index >= 0) this.#waiters.splice(index, 1);
          reject(new EvaluationCancelledError(signal?.reason));
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  #releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiters.shift();
      if (!next) {
        this.#held -= 1;
        return;
      }
      next.signal?.removeEventListener('abort', next.onAbort);
      next.grant(this.#releaser());
    };
  }
}
