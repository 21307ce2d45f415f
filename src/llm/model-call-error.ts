import type { FailedAttempt, FailureReason } from './kernel-model.js';

/** What `ModelCallError` knows about the failed call. Every string in it is already redacted. */
export interface ModelCallErrorContext {
  provider: string;
  modelId: string;
  /** Why the last attempt failed. */
  reason: FailureReason;
  /** HTTP status of the last attempt, when the server answered. */
  statusCode?: number;
  /** Whether the last failure was of a kind worth retrying (the budget of attempts ran out). */
  isRetryable: boolean;
  /** Attempts made, all of them failed. */
  attempts: number;
  failedAttempts: FailedAttempt[];
  /** Wall time from the first attempt to giving up, in milliseconds. */
  elapsedMs: number;
  cause?: unknown;
}

/** The stored form of a `ModelCallError`: plain data, no credentials, no `cause`. */
export interface ModelCallErrorRecord {
  name: 'ModelCallError';
  message: string;
  provider: string;
  modelId: string;
  reason: FailureReason;
  statusCode?: number;
  isRetryable: boolean;
  attempts: number;
  failedAttempts: FailedAttempt[];
  elapsedMs: number;
}

/**
 * A model call that failed for good: a non-retryable error, or retryable errors until the attempts
 * ran out. The search ends the branch that made the call and records `toRecord()`; the run goes on.
 *
 * `message` is redacted. `cause` is the last underlying error as thrown by the SDK; do not
 * serialise it into records (use `toRecord()`).
 */
export class ModelCallError extends Error {
  override readonly name = 'ModelCallError';
  readonly provider: string;
  readonly modelId: string;
  readonly reason: FailureReason;
  readonly statusCode: number | undefined;
  readonly isRetryable: boolean;
  readonly attempts: number;
  readonly failedAttempts: FailedAttempt[];
  readonly elapsedMs: number;

  constructor(message: string, context: ModelCallErrorContext) {
    super(message, { cause: context.cause });
    this.provider = context.provider;
    this.modelId = context.modelId;
    this.reason = context.reason;
    this.statusCode = context.statusCode;
    this.isRetryable = context.isRetryable;
    this.attempts = context.attempts;
    this.failedAttempts = context.failedAttempts;
    this.elapsedMs = context.elapsedMs;
  }

  /** Plain, redacted data for the run store. */
  toRecord(): ModelCallErrorRecord {
    return {
      name: this.name,
      message: this.message,
      provider: this.provider,
      modelId: this.modelId,
      reason: this.reason,
      ...(this.statusCode === undefined ? {} : { statusCode: this.statusCode }),
      isRetryable: this.isRetryable,
      attempts: this.attempts,
      failedAttempts: this.failedAttempts,
      elapsedMs: this.elapsedMs,
    };
  }

  toJSON(): ModelCallErrorRecord {
    return this.toRecord();
  }

  static isInstance(error: unknown): error is ModelCallError {
    return error instanceof ModelCallError;
  }
}
