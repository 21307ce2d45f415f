import type { z } from 'zod';
import type { EvaluationResult } from '../../core/verdict.js';
import type { speedOfLightSchema } from '../api-schemas/candidate-schemas.js';

/** The roofline comparison of a correct result, as the API gives it. */
export type SpeedOfLightView = z.infer<typeof speedOfLightSchema>;

/**
 * The share of speed of light of a correct result (docs/spec.md section 7), from the guard's roofline
 * numbers (`result.guard.speed_of_light`, src/core/guard-report.ts): the bound over the candidate's
 * median. Null where the evaluator measured no bound, or the result is not correct or not timed.
 */
export function speedOfLight(result: EvaluationResult): SpeedOfLightView | null {
  if (result.verdict !== 'correct' || !result.timing) return null;
  const median = result.timing.candidate_ms.median;
  const bound = result.guard?.speed_of_light;
  if (!(median > 0) || !bound) return null;
  const lowerBoundMs = bound.lower_bound_ms;
  if (lowerBoundMs === null || !Number.isFinite(lowerBoundMs) || lowerBoundMs <= 0) return null;
  const share = bound.share_of_bound !== null && Number.isFinite(bound.share_of_bound) ? bound.share_of_bound : lowerBoundMs / median;
  return { lowerBoundMs, share, bytes: bound.bytes, flops: bound.flops };
}
