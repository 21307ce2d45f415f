/**
 * Runs tasks with at most `width` in flight, starting a new one whenever one settles, for as long
 * as `next()` hands out work (it returns null when there is none left or the search must stop).
 * Waits for every started task; rethrows the first error once all have settled.
 */
export async function runPool<T>(width: number, next: () => T | null, task: (item: T) => Promise<unknown>): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  let firstError: { error: unknown } | null = null;
  for (;;) {
    while (firstError === null && inFlight.size < width) {
      const item = next();
      if (item === null) break;
      const running: Promise<void> = task(item).then(
        () => undefined,
        (error: unknown) => {
          firstError ??= { error };
        },
      );
      const tracked = running.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
    }
    if (inFlight.size === 0) break;
    await Promise.race(inFlight);
  }
  if (firstError !== null) throw (firstError as { error: unknown }).error;
}
