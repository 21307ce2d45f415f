/** Speedups of a candidate against the baselines, as ratios of median times (>1 is faster). */
export interface Speedups {
  vsEager: number | null;
  vsCompile: number | null;
  /** Against the faster of eager and torch.compile (the "best baseline"). */
  vsBest: number | null;
}

/**
 * Speedups from median times in milliseconds. A baseline that is missing (null) gives a null
 * speedup against it; the best baseline is the faster of those present.
 *
 * @example computeSpeedups(0.5, 1.0, 0.8) // { vsEager: 2, vsCompile: 1.6, vsBest: 1.6 }
 */
export function computeSpeedups(candidateMedianMs: number, eagerMedianMs: number | null, compileMedianMs: number | null): Speedups {
  const ratio = (baselineMs: number | null): number | null => (baselineMs === null || candidateMedianMs <= 0 ? null : baselineMs / candidateMedianMs);
  const present = [eagerMedianMs, compileMedianMs].filter((value): value is number => value !== null);
  const bestMs = present.length > 0 ? Math.min(...present) : null;
  return { vsEager: ratio(eagerMedianMs), vsCompile: ratio(compileMedianMs), vsBest: ratio(bestMs) };
}
