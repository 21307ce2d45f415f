/** Gives back what {@link Semaphore.acquire} took; calling it twice does nothing. */
export type Release = () => void;

export interface SemaphoreOptions {
  /** What a wait ended by an abort rejects with, from the signal's reason. Default: the reason itself. */
  abortError?: (reason: unknown) => unknown;
}

interface Waiter {
  grant: (release: Release) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  priority: number;
}

export interface AcquireOptions {
  /** Waiters of a higher priority go first; first come, first served within one. Default 0. */
  priority?: number;
}

/**
 * At most `permits` holders at once; the others wait in the order they asked (by priority first,
 * when some ask with one: a device's background work waits behind evaluations). An abort while
 * waiting rejects (with `abortError` of the signal's reason) and takes nothing. The one semaphore
 * of kforge (model calls per provider, builds and device slots); kept by hand because it is forty
 * lines and needs abort signals and first-come order, which the small libraries (p-limit) lack.
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
  readonly #abortError: (reason: unknown) => unknown;

  constructor(permits: number, options: SemaphoreOptions = {}) {
    if (!Number.isInteger(permits) || permits < 1) {
      throw new RangeError(`expected the number of permits to be a positive integer, got ${permits}`);
    }
    this.permits = permits;
    this.#abortError = options.abortError ?? ((reason) => reason);
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
  acquire(signal?: AbortSignal, options: AcquireOptions = {}): Promise<Release> {
    const priority = options.priority ?? 0;
    if (signal?.aborted) return Promise.reject(this.#abortError(signal.reason));
    if (this.#held < this.permits && this.#waiters.length === 0) {
      this.#held += 1;
      return Promise.resolve(this.#releaser());
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        grant: resolve,
        signal,
        onAbort: () => {
          const index = this.#waiters.indexOf(waiter);
          if (index >= 0) this.#waiters.splice(index, 1);
          reject(this.#abortError(signal?.reason));
        },
        priority,
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      const behind = this.#waiters.findIndex((other) => other.priority < priority);
      if (behind < 0) this.#waiters.push(waiter);
      else this.#waiters.splice(behind, 0, waiter);
    });
  }

  /** Runs `task` once a permit is free, and gives the permit back when it settles. */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await task();
    } finally {
      release();
    }
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
