/**
 * A reward could not be computed for a reason that is not the candidate's: the evaluator itself
 * failed (no Python, no PyTorch, a broken worker), or the server is stopping. Answered 503 with
 * `Retry-After`; nothing is cached, so a retry evaluates again.
 */
export class RewardUnavailableError extends Error {
  override readonly name = 'RewardUnavailableError';
  /** Stable id a client may branch on: `evaluation-failed` or `server-stopping`. */
  readonly code: 'evaluation-failed' | 'server-stopping';
  readonly retryAfterSeconds: number;

  constructor(code: RewardUnavailableError['code'], message: string, options: { retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.code = code;
    this.retryAfterSeconds = options.retryAfterSeconds ?? 5;
  }
}
