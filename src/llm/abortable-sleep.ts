/**
 * Waits `durationMs` milliseconds, or rejects with the signal's reason as soon as it aborts.
 */
export function abortableSleep(durationMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, durationMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The shape of `abortableSleep`, for injection. */
export type SleepFunction = (durationMs: number, signal?: AbortSignal) => Promise<void>;
