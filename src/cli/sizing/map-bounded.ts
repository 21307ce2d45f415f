/**
 * `task` over `items`, at most `concurrency` at once, the results in the items' order. Once a task
 * throws, no further task starts, and the first error is thrown when the running ones have ended.
 *
 * @example
 * const audits = await mapBounded(problems, os.availableParallelism(), (problem) => audit(problem));
 */
export async function mapBounded<T, R>(items: readonly T[], concurrency: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | null = null;
  const lane = async (): Promise<void> => {
    while (failure === null && next < items.length) {
      const index = next;
      next += 1;
      try {
        results[index] = await task(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, lane));
  if (failure !== null) throw (failure as { error: unknown }).error;
  return results;
}
