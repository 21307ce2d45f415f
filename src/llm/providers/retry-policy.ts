/** How long to wait between attempts. All durations in milliseconds. */
export interface BackoffOptions {
  /** Wait after the first failure, before jitter. Default 1000. */
  initialDelayMs: number;
  /** Growth per failed attempt. Default 2. */
  factor: number;
  /** Longest wait, for backoff and for a server's Retry-After alike. Default 60000. */
  maxDelayMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialDelayMs: 1000, factor: 2, maxDelayMs: 60_000 };

/**
 * Exponential backoff with "equal jitter": half of the exponential delay is fixed, the other half
 * is drawn uniformly, so concurrent branches that failed together do not retry together.
 *
 * @param failedAttempt 1-based number of the attempt that just failed.
 * @param random A source of numbers in [0, 1) (injected so tests are deterministic).
 * @returns Milliseconds to wait.
 */
export function backoffDelayMs(failedAttempt: number, options: BackoffOptions, random: () => number): number {
  const exponential = Math.min(options.maxDelayMs, options.initialDelayMs * options.factor ** (failedAttempt - 1));
  return Math.round(exponential / 2 + random() * (exponential / 2));
}

/**
 * Reads a server's requested wait from `retry-after-ms` (milliseconds, sent by OpenAI) or
 * `retry-after` (seconds, or an HTTP date). Header names must be lower-case, as fetch gives them.
 *
 * @param nowMs The current time as a Unix epoch in milliseconds (for HTTP dates).
 * @returns Milliseconds to wait, or undefined when no usable header is present.
 */
export function retryAfterMs(headers: Record<string, string> | undefined, nowMs: number): number | undefined {
  if (!headers) return undefined;
  const milliseconds = headers['retry-after-ms'];
  if (milliseconds !== undefined) {
    const value = Number.parseFloat(milliseconds);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const retryAfter = headers['retry-after'];
  if (retryAfter === undefined) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(retryAfter)) return Number.parseFloat(retryAfter) * 1000;
  const date = Date.parse(retryAfter);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/**
 * The wait before the next attempt: the server's Retry-After when it sent one (capped at
 * `maxDelayMs`), otherwise jittered exponential backoff.
 */
export function nextDelayMs(failedAttempt: number, serverRetryAfterMs: number | undefined, options: BackoffOptions, random: () => number): number {
  if (serverRetryAfterMs !== undefined) return Math.min(options.maxDelayMs, Math.round(serverRetryAfterMs));
  return backoffDelayMs(failedAttempt, options, random);
}
