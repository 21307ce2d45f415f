import { penaltyOf, type RewardShaping } from '../../core/reward-shaping-schema.js';
import { shapeReward } from '../../core/reward-shaping.js';
import type { EvaluationResult } from '../../core/verdict.js';

/** What a model turn's reward is computed from. */
export interface TurnRewardInput {
  /** Whether the call produced a reply at all (a failed call has nothing to score). */
  replied: boolean;
  /** Whether a candidate was taken from the reply. */
  hasCandidate: boolean;
  /** The candidate's evaluation; null before it is evaluated (or without a candidate). */
  result: EvaluationResult | null;
}

/** A turn's reward and how it was reached. */
export interface TurnReward {
  reward: number;
  explanation: string;
}

/**
 * A model turn's reward under the reward API's shaping (`shapeReward`, docs/reward.md), so an
 * export scores a turn exactly as `POST /api/reward` would score its candidate. A reply without
 * code is scored as the reward API scores an empty or broken candidate file: the `invalid_input`
 * penalty. Null (nothing to score) for a failed call and for a candidate not yet evaluated.
 *
 * @example turnReward({ replied: true, hasCandidate: false, result: null }, DEFAULT_REWARD_SHAPING) // { reward: -1, … }
 */
export function turnReward(input: TurnRewardInput, shaping: RewardShaping): TurnReward | null {
  if (!input.replied) return null;
  if (!input.hasCandidate) {
    const penalty = penaltyOf(shaping, 'invalid_input');
    return { reward: penalty, explanation: `no candidate in the reply: scored as invalid input, ${penalty}` };
  }
  if (!input.result) return null;
  const shaped = shapeReward(input.result, shaping);
  return { reward: shaped.reward, explanation: shaped.explanation };
}
