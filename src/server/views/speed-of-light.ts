import type { EvaluationResult } from '../../core/verdict.js';

/** The roofline comparison of a correct result, as the API gives it. */
export interface SpeedOfLightView {
  /** The least time the reference's work can take on this device, in ms. */
  lowerBoundMs: number;
  /** `lowerBoundMs / candidate median`: 1 is at the bound; above 1 is physically suspect. */
  share: number;
  /** Bytes the bound assumes moved and FLOPs it assumes done (null where unknown). */
  bytes: number | null;
  flops: number | null;
}

const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/**
 * The share of speed of light of a correct result (docs/spec.md section 7), from the guard's roofline
 * numbers (`result.guard.speed_of_light`, docs/guard.md): the bound over the candidate's median.
 * Null where the evaluator measured no bound, or the result is not correct.
 */
export function speedOfLight(result: EvaluationResult): SpeedOfLightView | null {
  const median = result.verdict === 'correct' ? result.timing?.candidate_ms.median : undefined;
  const bound = result.guard?.speed_of_light;
  if (median === undefined || !(median > 0) || bound === null || typeof bound !== 'object') return null;
  const fields = bound as Record<string, unknown>;
  const lowerBoundMs = fields.lower_bound_ms;
  if (!finite(lowerBoundMs) || lowerBoundMs <= 0) return null;
  const share = finite(fields.share_of_bound) ? fields.share_of_bound : lowerBoundMs / median;
  return { lowerBoundMs, share, bytes: finite(fields.bytes) ? fields.bytes : null, flops: finite(fields.flops) ? fields.flops : null };
}
