import { GUARD_POLICIES, type GuardPolicyName } from './guard-policies.js';
import type { Reason, Verdict } from './verdict.js';

/**
 * How a reason names the policy that would measure a candidate its own policy rejected: the
 * worker's `measured_under` (worker/kforge_worker/guard/policy_rejection.py) writes these words,
 * and so does {@link measuredUnder}; `worker/tests/test_shared_constants.py` checks both agree.
 */
export const MEASURED_UNDER_PATTERN = /the guard policy `([a-z-]+)` would measure it/;

/** What each policy that waives a rejection measures, in the worker's words (policy_rejection.py). */
const MEASURES = {
  kernelbench: 'with PyTorch operators beside its kernels reported, not rejected',
  pytorch: 'as a PyTorch program, no kernel of its own required',
} as const satisfies Partial<Record<GuardPolicyName, string>>;

/**
 * The clause naming the policy that would measure a rejected candidate as it is.
 *
 * @example measuredUnder('pytorch') // "the guard policy `pytorch` would measure it as a PyTorch program, no kernel of its own required"
 */
export function measuredUnder(policy: keyof typeof MEASURES): string {
  return `the guard policy \`${policy}\` would measure it ${MEASURES[policy]}`;
}

/**
 * The shipped policy that would measure a candidate its policy rejected (the first reason's own
 * words, docs/guard.md "Policies"), for a command to name as its `--guard-policy`; null for any
 * other verdict, or a rejection no policy waives (a reward hack, a hidden trace).
 *
 * @example measuringPolicy(result) // 'pytorch' for a plain PyTorch ModelNew under `kernelbench`
 */
export function measuringPolicy(result: { verdict: Verdict; reasons: readonly Reason[] }): GuardPolicyName | null {
  if (result.verdict !== 'rejected') return null;
  const named = MEASURED_UNDER_PATTERN.exec(result.reasons[0]?.message ?? '')?.[1];
  return named !== undefined && (GUARD_POLICIES as readonly string[]).includes(named) ? (named as GuardPolicyName) : null;
}
