import type { EvaluationResult } from '../../../core/verdict.js';
import { geometricMean } from '../../../eval/problem/shape-sweep-result.js';
import { VERDICT_RANK } from '../../../store/run-store.js';
import type { Attempt, EvaluatedAttempt } from '../state/attempt.js';

/** Which baseline a speedup is measured against. `best` is the faster of eager and compile. */
export type SpeedupBaseline = 'eager' | 'compile' | 'best';

/**
 * Median candidate time in ms of a correct result, or null. For a problem folder's sweep
 * (docs/problems.md), the geometric mean of its shapes' medians: every candidate of the problem is
 * timed at the same shapes, so the sweep as a whole is compared, never its first shape alone.
 */
export function medianMs(result: EvaluationResult): number | null {
  if (result.verdict !== 'correct' || !result.timing) return null;
  const shapes = result.shapes ?? [];
  if (shapes.length > 1) return geometricMean(shapes.map((shape) => shape.timing?.candidate_median_ms)) ?? result.timing.candidate_ms.median;
  return result.timing.candidate_ms.median;
}

/** The speedup of a correct result against the given baseline, or null when unknown. */
export function speedupOf(result: EvaluationResult, baseline: SpeedupBaseline = 'eager'): number | null {
  if (result.verdict !== 'correct' || !result.timing) return null;
  if (baseline === 'eager') return result.timing.speedup_vs_eager;
  if (baseline === 'compile') return result.timing.speedup_vs_compile;
  return result.timing.speedup_vs_best ?? result.timing.speedup_vs_eager;
}

/**
 * Orders two evaluated attempts, better first (negative when `a` is better). Correct beats any
 * failure; among correct ones the lower median time wins (medians, not means: one slow trial must
 * not decide); among failures the one that got further wins; ties keep the earlier attempt.
 */
export function compareAttempts(a: EvaluatedAttempt, b: EvaluatedAttempt): number {
  const aMs = medianMs(a.result);
  const bMs = medianMs(b.result);
  if (aMs !== null && bMs !== null) return aMs - bMs;
  if (aMs !== null) return -1;
  if (bMs !== null) return 1;
  // How far a failed candidate got (the store's order: one that ran beats one that did not build),
  // so a problem with no correct candidate still reports its most useful attempt.
  return VERDICT_RANK.indexOf(a.result.verdict) - VERDICT_RANK.indexOf(b.result.verdict);
}

/** The best evaluated attempt of a history (see `compareAttempts`), or null when none was evaluated. */
export function bestAttempt(history: readonly Attempt[]): EvaluatedAttempt | null {
  let best: EvaluatedAttempt | null = null;
  for (const attempt of history) {
    if (attempt.kind !== 'evaluated') continue;
    if (best === null || compareAttempts(attempt, best) < 0) best = attempt;
  }
  return best;
}

/**
 * Whether `candidate` is a real improvement on `best`: correct, and its median at least
 * `minRelativeGain` (a fraction, 0.01 = 1%) below the best correct median so far. Timing noise
 * below that margin does not reset the stall counter.
 */
export function isImprovement(candidate: EvaluationResult, best: EvaluationResult | null, minRelativeGain: number): boolean {
  const candidateMs = medianMs(candidate);
  if (candidateMs === null) return false;
  const bestMs = best ? medianMs(best) : null;
  if (bestMs === null) return true;
  return candidateMs < bestMs * (1 - minRelativeGain);
}

/** The fastest correct attempts of a history, fastest first, at most `count`. */
export function fastestCorrect(history: readonly Attempt[], count: number): EvaluatedAttempt[] {
  return history
    .filter((attempt): attempt is EvaluatedAttempt => attempt.kind === 'evaluated' && medianMs(attempt.result) !== null)
    .sort(compareAttempts)
    .slice(0, count);
}
