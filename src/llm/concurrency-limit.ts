/**
 * A counting semaphore: at most `limit` holders at once, waiters served in arrival order. Share one
 * per provider so every model of that provider counts against the same limit.
 */
export class ConcurrencyLimit {
  readonly limit: number;
  private active = 0;
  private readonly waiting: Array<{ grant: () => void }> = [];

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`expected the concurrency limit to be a positive integer, got ${limit}`);
    }
    this.limit = limit;
  }

  /** Holders now. */
  get inFlight(): number {
    return this.active;
  }

  /**
   * Runs `task` once a place is free. Waiting ends early, with the signal's reason, if `signal`
   * aborts first.
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          this.active++;
          resolve();
        },
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private release(): void {
    this.active--;
    this.waiting.shift()?.grant();
  }
}
