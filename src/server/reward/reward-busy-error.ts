/**
 * More reward requests wait for an evaluation than the server admits: the request is refused
 * (HTTP 429) rather than queued, and `retryAfterSeconds` says when to come back.
 */
export class RewardBusyError extends Error {
  override readonly name = 'RewardBusyError';
  /** Seconds after which a retry is likely to be admitted (the `Retry-After` header). */
  readonly retryAfterSeconds: number;
  /** Evaluations waiting when the request was refused, and the bound. */
  readonly waiting: number;
  readonly maxWaiting: number;

  constructor(options: { retryAfterSeconds: number; waiting: number; maxWaiting: number; requested: number }) {
    super(
      `the reward server is busy: ${options.waiting} evaluations wait (at most ${options.maxWaiting}) and this request needs ${options.requested} more; retry after ${options.retryAfterSeconds} s`,
    );
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.waiting = options.waiting;
    this.maxWaiting = options.maxWaiting;
  }
}
