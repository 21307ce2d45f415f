import { Semaphore } from '../../core/semaphore.js';

/**
 * At most `limit` model calls at once, waiters served in arrival order (the core
 * {@link Semaphore}; an abort while waiting rejects with the signal's reason). Share one per
 * provider so every model of that provider counts against the same limit.
 */
export class ConcurrencyLimit extends Semaphore {
  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`expected the concurrency limit to be a positive integer, got ${limit}`);
    super(limit);
  }

  /** The most holders at once. */
  get limit(): number {
    return this.permits;
  }

  /** Holders now. */
  get inFlight(): number {
    return this.held;
  }
}
