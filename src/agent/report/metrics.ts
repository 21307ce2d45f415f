import type { Verdict } from '../../core/verdict.js';
import type { SpeedupBaseline } from '../search/selection/candidate-ranking.js';

/** The thresholds `kforge optimize` reports `fast_p` at. */
export const FAST_P_THRESHOLDS = [0, 1, 1.5, 2] as const;

/** The outcome of one problem: the verdict of its best candidate and that candidate's speedups. */
export interface ProblemOutcome {
  /** Verdict of the problem's best candidate; null when no candidate was evaluated at all. */
  verdict: Verdict | null;
  speedupVsEager: number | null;
  speedupVsCompile: number | null;
  speedupVsBest: number | null;
}

/** `fast_p` at one threshold: the share of all problems, in [0, 1]. */
export interface FastP {
  p: number;
  share: number;
}

/** Suite metrics as KernelBench defines them (docs/spec.md section 7). */
export interface SuiteMetrics {
  problemCount: number;
  correctCount: number;
  /** Correct problems over all problems, in [0, 1]; 0 for an empty suite. */
  correctShare: number;
  /** Against the eager baseline, KernelBench's default. */
  fastP: FastP[];
  /** Geometric-mean speedup over the correct problems that have that baseline; null when none. */
  geomeanSpeedup: Record<SpeedupBaseline, number | null>;
}

function speedupAgainst(outcome: ProblemOutcome, baseline: SpeedupBaseline): number | null {
  if (baseline === 'eager') return outcome.speedupVsEager;
  if (baseline === 'compile') return outcome.speedupVsCompile;
  return outcome.speedupVsBest;
}

/**
 * The geometric mean of positive numbers, or null for an empty list. Computed through logarithms
 * so a long suite does not overflow.
 */
export function geometricMean(values: readonly number[]): number | null {
  const positive = values.filter((value) => Number.isFinite(value) && value > 0);
  if (positive.length === 0) return null;
  return Math.exp(positive.reduce((sum, value) => sum + Math.log(value), 0) / positive.length);
}

/**
 * KernelBench's `fast_p`: the share of problems whose best candidate is correct and has a speedup
 * greater than `p`, counted over all problems, failures included (a failed problem is in the
 * denominator, never in the numerator). `fast_0` is the correct share.
 */
export function fastP(outcomes: readonly ProblemOutcome[], p: number, baseline: SpeedupBaseline = 'eager'): number {
  if (outcomes.length === 0) return 0;
  const fast = outcomes.filter((outcome) => {
    if (outcome.verdict !== 'correct') return false;
    const speedup = speedupAgainst(outcome, baseline);
    return p === 0 ? speedup === null || speedup > 0 : speedup !== null && speedup > p;
  });
  return fast.length / outcomes.length;
}

/** Correct share, `fast_p` at 0, 1, 1.5 and 2, and geometric-mean speedups of a suite. */
export function computeSuiteMetrics(outcomes: readonly ProblemOutcome[]): SuiteMetrics {
  const correct = outcomes.filter((outcome) => outcome.verdict === 'correct');
  const geomean = (baseline: SpeedupBaseline): number | null => geometricMean(correct.flatMap((outcome) => speedupAgainst(outcome, baseline) ?? []));
  return {
    problemCount: outcomes.length,
    correctCount: correct.length,
    correctShare: outcomes.length === 0 ? 0 : correct.length / outcomes.length,
    fastP: FAST_P_THRESHOLDS.map((p) => ({ p, share: fastP(outcomes, p) })),
    geomeanSpeedup: { eager: geomean('eager'), compile: geomean('compile'), best: geomean('best') },
  };
}
