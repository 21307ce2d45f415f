import type { EvaluationResult } from '../../core/verdict.js';

/**
 * The share of speed of light of a correct result (SPEC.md section 7): the roofline bound of the
 * problem's work over the candidate's median time. Read from `result.roofline.lower_bound_ms`
 * where the evaluator reports it; null where it does not (or the result is not correct).
 */
export function speedOfLight(result: EvaluationResult): { lowerBoundMs: number; share: number } | null {
  const median = result.verdict === 'correct' ? result.timing?.candidate_ms.median : undefined;
  const roofline = (result as { roofline?: unknown }).roofline;
  if (median === undefined || median <= 0 || roofline === null || typeof roofline !== 'object') return null;
  const lowerBoundMs = (roofline as { lower_bound_ms?: unknown }).lower_bound_ms;
  if (typeof lowerBoundMs !== 'number' || !Number.isFinite(lowerBoundMs) || lowerBoundMs <= 0) return null;
  return { lowerBoundMs, share: lowerBoundMs / median };
}
