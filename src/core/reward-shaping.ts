import { correctnessReward, highestReward, lowestCorrectReward, penaltyOf, type RewardBaseline, type RewardShaping } from './reward-shaping-schema.js';
import type { EvaluationResult, Verdict } from './verdict.js';

/** A reward with the figures it was computed from, so a training loop can log why. */
export interface ShapedReward {
  reward: number;
  /** The shaping with every parameter filled in. */
  name: RewardShaping['name'];
  params: RewardShaping['params'];
  verdict: Verdict;
  /** What correctness alone earned (for a failure: its penalty). */
  correctnessReward: number;
  /** What speed added (`reward − correctnessReward`; negative for a slow `log-speedup` candidate); 0 for failures and untimed candidates. */
  speedReward: number;
  /** The baseline the speedup was taken against; null for `binary` and failures. */
  baseline: RewardBaseline | null;
  /** Speedup over that baseline as measured (baseline median ÷ candidate median); null when unknown. */
  speedup: number | null;
  /**
   * The speedup the reward used: the measured one, with the candidate's time floored at the
   * speed-of-light bound (docs/hacks.md #16), so an implausible time earns no more than the bound.
   */
  effectiveSpeedup: number | null;
  /** Index of the highest tier reached (`tiered`); null below every tier or for other shapings. */
  tier: number | null;
  /** One sentence: how the reward was reached. */
  explanation: string;
}

const SPEEDUP_FIELD = { best: 'speedup_vs_best', eager: 'speedup_vs_eager', compile: 'speedup_vs_compile' } as const;

/** `share_of_bound` of the guard's speed-of-light report: bound ÷ median (above 1 is faster than the bound). */
function shareOfBound(result: EvaluationResult): number | null {
  const share = result.guard?.speed_of_light?.share_of_bound ?? null;
  return share !== null && Number.isFinite(share) && share > 0 ? share : null;
}

interface Speedups {
  speedup: number | null;
  effective: number | null;
  /** Why there is no speedup, when there is none. */
  missing: string | null;
  floored: boolean;
}

function speedupsOf(result: EvaluationResult, baseline: RewardBaseline): Speedups {
  if (!result.timing) return { speedup: null, effective: null, missing: 'the candidate was not timed (skipTiming)', floored: false };
  const speedup = result.timing[SPEEDUP_FIELD[baseline]];
  if (speedup === null || !Number.isFinite(speedup) || speedup <= 0) {
    const why =
      baseline === 'compile'
        ? (result.timing.compile_unavailable ?? 'torch.compile was not timed')
        : baseline === 'eager'
          ? (result.timing.eager_unavailable ?? 'eager was not timed')
          : 'no baseline was timed';
    return { speedup: null, effective: null, missing: `no speedup over the ${baseline} baseline: ${why}`, floored: false };
  }
  const share = shareOfBound(result);
  const floored = share !== null && share > 1;
  return { speedup, effective: floored ? speedup / share : speedup, missing: null, floored };
}

const clamp = (value: number, lo: number, hi: number): number => Math.min(Math.max(value, lo), hi);
const shown = (value: number): string => (Number.isInteger(value) ? String(value) : value.toPrecision(4));

/** The reward of a verdict other than `correct`: its penalty, named in the shaping or its `failure`. */
function penalized(verdict: Exclude<EvaluationResult['verdict'], 'correct'>, shaping: RewardShaping): ShapedReward {
  const penalty = penaltyOf(shaping, verdict);
  const named = shaping.params.penalties[verdict] !== undefined;
  return {
    name: shaping.name,
    params: shaping.params,
    verdict,
    reward: penalty,
    correctnessReward: penalty,
    speedReward: 0,
    baseline: null,
    speedup: null,
    effectiveSpeedup: null,
    tier: null,
    explanation: `${verdict.replace(/_/g, ' ')}: ${named ? `its penalty` : '`failure`'} ${shown(penalty)}`,
  };
}

/**
 * The reward of one evaluation under a resolved shaping (formulas in docs/reward.md).
 *
 * - A verdict other than `correct` gets its penalty, always below what any correct candidate gets.
 * - A correct candidate gets the shaping's correctness reward plus, where a speedup over the chosen
 *   baseline is known, the speed part; without one (skipTiming, a baseline that could not be timed)
 *   it gets the correctness reward only.
 * - The result never exceeds the shaping's highest reward.
 *
 * @example shapeReward(result, resolveRewardShaping('binary')).reward // 1 when correct
 */
export function shapeReward(result: EvaluationResult, shaping: RewardShaping): ShapedReward {
  const common = { name: shaping.name, params: shaping.params, verdict: result.verdict };
  if (result.verdict !== 'correct') return penalized(result.verdict, shaping);
  const base = correctnessReward(shaping);
  if (shaping.name === 'binary') {
    return {
      ...common,
      reward: base,
      correctnessReward: base,
      speedReward: 0,
      baseline: null,
      speedup: null,
      effectiveSpeedup: null,
      tier: null,
      explanation: `correct: ${shown(base)}`,
    };
  }
  const { baseline } = shaping.params;
  const speeds = speedupsOf(result, baseline);
  const flooredNote = speeds.floored ? ' (time floored at the speed-of-light bound)' : '';
  let reward = base;
  let tier: number | null = null;
  let explanation: string;
  if (speeds.effective === null) {
    explanation = `correct, ${speeds.missing}: the correctness reward ${shown(base)} only`;
  } else if (shaping.name === 'tiered') {
    const tiers = shaping.params.tiers;
    for (const [index, candidateTier] of tiers.entries()) if (speeds.effective >= candidateTier.speedup) tier = index;
    reward = tier === null ? shaping.params.slower : tiers[tier]!.reward;
    explanation =
      tier === null
        ? `correct at ${shown(speeds.effective)}x over ${baseline}${flooredNote}, below the first tier (${shown(tiers[0]!.speedup)}x): ${shown(reward)}`
        : `correct at ${shown(speeds.effective)}x over ${baseline}${flooredNote}: tier ≥ ${shown(tiers[tier]!.speedup)}x earns ${shown(reward)}`;
  } else {
    const { lo, hi } = shaping.params;
    reward = clamp(Math.log2(speeds.effective), lo, hi);
    explanation = `correct at ${shown(speeds.effective)}x over ${baseline}${flooredNote}: clamp(log2 ${shown(speeds.effective)}, ${shown(lo)}, ${shown(hi)}) = ${shown(reward)}`;
  }
  // Belt and braces: a correct candidate stays within [lowest correct, highest] whatever the figures.
  reward = clamp(reward, lowestCorrectReward(shaping), highestReward(shaping));
  return {
    ...common,
    reward,
    correctnessReward: base,
    speedReward: reward - base,
    baseline,
    speedup: speeds.speedup,
    effectiveSpeedup: speeds.effective,
    tier,
    explanation,
  };
}
