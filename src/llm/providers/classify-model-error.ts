import { APICallError, RetryError } from 'ai';
import type { FailureReason } from '../kernel-model.js';
import { redactSecrets } from './redact-secrets.js';
import { retryAfterMs } from './retry-policy.js';

/** One failed attempt, reduced to what retry logic and records need. */
export interface ClassifiedFailure {
  reason: FailureReason;
  statusCode?: number;
  /** The only thing retry logic reads. */
  isRetryable: boolean;
  /** Wait the server asked for, in milliseconds. */
  retryAfterMs?: number;
  /** Redacted one-line message. */
  message: string;
}

/** What was going on around the failure. */
export interface ClassifyContext {
  /** The per-call time-out fired. */
  timedOut: boolean;
  /** The caller's signal aborted (the run is stopping, or the branch was cancelled). */
  callerAborted: boolean;
  /** Secrets to remove from messages. */
  secrets: readonly string[];
  /** Current time, Unix epoch milliseconds (for Retry-After dates). */
  nowMs: number;
}

const NETWORK_ERROR_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

const CLIENT_ERRORS = new Set(['AI_InvalidPromptError', 'AI_InvalidArgumentError', 'AI_UnsupportedFunctionalityError']);

const INVALID_RESPONSE_ERRORS = new Set([
  'AI_InvalidResponseDataError',
  'AI_TypeValidationError',
  'AI_JSONParseError',
  'AI_NoContentGeneratedError',
  'AI_EmptyResponseBodyError',
]);

/**
 * Classifies an error thrown by one model call: rate limits, server errors, time-outs and dropped
 * connections are retryable; the caller's own cancellation, 4xx answers and malformed responses
 * are not.
 */
export function classifyModelError(error: unknown, context: ClassifyContext): ClassifiedFailure {
  const underlying = RetryError.isInstance(error) ? error.lastError : error;
  const message = (text: string) => oneLine(redactSecrets(text, context.secrets));

  if (context.callerAborted) {
    return { reason: 'aborted', isRetryable: false, message: 'the call was cancelled by its caller' };
  }
  if (context.timedOut) {
    return { reason: 'timeout', isRetryable: true, message: 'the call ran past its time-out' };
  }
  if (APICallError.isInstance(underlying)) {
    const statusCode = underlying.statusCode;
    const wait = retryAfterMs(underlying.responseHeaders, context.nowMs);
    const prefix = statusCode === undefined ? '' : `HTTP ${statusCode}: `;
    return {
      reason: apiCallReason(statusCode, underlying.isRetryable),
      ...(statusCode === undefined ? {} : { statusCode }),
      isRetryable: underlying.isRetryable,
      ...(wait === undefined ? {} : { retryAfterMs: wait }),
      message: message(`${prefix}${underlying.message || underlying.responseBody || 'no message'}`),
    };
  }
  if (isAbortLike(underlying)) {
    return { reason: 'timeout', isRetryable: true, message: message(describe(underlying)) };
  }
  if (hasNetworkCode(underlying)) {
    return { reason: 'network', isRetryable: true, message: message(describe(underlying)) };
  }
  if (underlying instanceof Error && CLIENT_ERRORS.has(underlying.name)) {
    return { reason: 'client-error', isRetryable: false, message: message(describe(underlying)) };
  }
  if (underlying instanceof Error && INVALID_RESPONSE_ERRORS.has(underlying.name)) {
    return { reason: 'invalid-response', isRetryable: false, message: message(describe(underlying)) };
  }
  return { reason: 'unknown', isRetryable: false, message: message(describe(underlying)) };
}

function apiCallReason(statusCode: number | undefined, isRetryable: boolean): FailureReason {
  if (statusCode === 429) return 'rate-limited';
  if (statusCode === 408) return 'timeout';
  if (statusCode !== undefined && statusCode >= 500) return 'server-error';
  if (statusCode === undefined) return isRetryable ? 'network' : 'unknown';
  return 'client-error';
}

function isAbortLike(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

function hasNetworkCode(error: unknown): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    const code = (current as Error & { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return true;
    current = current.cause;
  }
  return false;
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 500 ? `${flat.slice(0, 497)}...` : flat;
}
