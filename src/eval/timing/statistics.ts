import type { TimingStats } from '../../core/verdict.js';

/** Median of the values (mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = sortedCopy(values);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Arithmetic mean. */
export function mean(values: readonly number[]): number {
  requireValues(values);
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

/** Sample standard deviation (n − 1 in the denominator); 0 for a single value. */
export function sampleStandardDeviation(values: readonly number[]): number {
  requireValues(values);
  if (values.length < 2) return 0;
  const average = mean(values);
  let squares = 0;
  for (const value of values) squares += (value - average) ** 2;
  return Math.sqrt(squares / (values.length - 1));
}

/**
 * 1-based ranks `[lower, upper]` of the order statistics that bound a distribution-free confidence
 * interval of the median: the largest `lower` with P(B < lower) ≤ (1 − confidence) / 2 for
 * B ~ Binomial(n, ½), and `upper = n + 1 − lower`. The interval `[x₍lower₎, x₍upper₎]` then covers
 * the true median with probability at least `confidence`. Where n is too small for that
 * (n < 6 at 95%), the ranks are `[1, n]`.
 *
 * @example medianConfidenceRanks(100) // [40, 61]
 */
export function medianConfidenceRanks(count: number, confidence = 0.95): [number, number] {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`expected a positive count, got ${count}`);
  const tail = (1 - confidence) / 2;
  let cumulative = 0;
  let logCoefficient = 0;
  const logHalfPower = count * Math.log(0.5);
  let lower = 0;
  for (let k = 0; k < count; k += 1) {
    cumulative += Math.exp(logCoefficient + logHalfPower);
    if (cumulative > tail) break;
    lower = k + 1;
    logCoefficient += Math.log(count - k) - Math.log(k + 1);
  }
  if (lower < 1) return [1, count];
  return [lower, count + 1 - lower];
}

/** Distribution-free 95% confidence interval of the median, from the order statistics. */
export function medianConfidenceInterval(values: readonly number[], confidence = 0.95): [number, number] {
  const sorted = sortedCopy(values);
  const [lower, upper] = medianConfidenceRanks(sorted.length, confidence);
  return [sorted[lower - 1]!, sorted[upper - 1]!];
}

/**
 * Summary statistics of raw per-call times in milliseconds: median, mean, sample std, min, max,
 * the 95% interval of the median and the count.
 */
export function summarizeTimes(timesMs: readonly number[]): TimingStats {
  const sorted = sortedCopy(timesMs);
  return {
    median: median(sorted),
    mean: mean(sorted),
    std: sampleStandardDeviation(sorted),
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!,
    ci95: medianConfidenceInterval(sorted),
    n: sorted.length,
  };
}

function sortedCopy(values: readonly number[]): number[] {
  requireValues(values);
  for (const value of values) {
    if (!Number.isFinite(value)) throw new RangeError(`expected finite values, got ${value}`);
  }
  return [...values].sort((a, b) => a - b);
}

function requireValues(values: readonly number[]): void {
  if (values.length === 0) throw new RangeError('expected at least one value');
}
