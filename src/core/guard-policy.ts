import { z } from 'zod';
import { DEFAULT_GUARD_POLICY, GUARD_POLICIES, type GuardPolicyName } from './guard-policies.js';

export { DEFAULT_GUARD_POLICY, GUARD_POLICIES, GUARD_POLICY_DESCRIPTIONS, guardPolicyHelp, type GuardPolicyName } from './guard-policies.js';

/**
 * The reward API's default: a reward is what a training loop optimises against, so anything a
 * policy lets PyTorch do is what the model learns to hand to PyTorch (docs/reward.md).
 */
export const DEFAULT_REWARD_GUARD_POLICY: GuardPolicyName = 'own-kernels';

/**
 * Former names still accepted where stored runs and configuration files hold them: `default` was
 * the glue-only policy that is now `own-kernels`.
 */
export const GUARD_POLICY_ALIASES: Readonly<Record<string, GuardPolicyName>> = { default: 'own-kernels' };

/** Policies under which PyTorch compute that ran (and so a substituted operator) is a rejection. */
export const POLICIES_REJECTING_PYTORCH: readonly GuardPolicyName[] = ['own-kernels', 'strict'];

/**
 * Policies that record, instead of rejecting, a candidate whose own kernel did not run or whose
 * fallback ran instead (the worker's `own_work: "note"`); under every other policy that is a
 * rejection (`own-kernel`, `silent-fallback`, `torch-fallback`; docs/guard.md, "What ran").
 */
export const POLICIES_WITHOUT_OWN_WORK_RULE: readonly GuardPolicyName[] = ['pytorch'];

/**
 * Checks whose rejection the policy decides from what ran in the traced call (docs/guard.md, "What
 * ran"): they say nothing of whether the answer is right, so a wrong answer is reported before them
 * (docs/worker-protocol.md, "Verdicts from the guard").
 */
export const POLICY_DECIDED_CHECKS: ReadonlySet<string> = new Set(['torch-fallback', 'own-kernel', 'silent-fallback']);

/** The shipped policy a name means (an alias resolved), or undefined for an unknown name. */
export function resolveGuardPolicy(name: string): GuardPolicyName | undefined {
  if ((GUARD_POLICIES as readonly string[]).includes(name)) return name as GuardPolicyName;
  return GUARD_POLICY_ALIASES[name];
}

/** Every name a flag, a request or a stored plan may give: the shipped policies and the aliases. */
export const ACCEPTED_GUARD_POLICY_NAMES = [...GUARD_POLICIES, ...Object.keys(GUARD_POLICY_ALIASES)] as [string, ...string[]];

/**
 * A zod schema for a policy name given in `field` (a flag or a body field): a shipped name or an
 * alias (resolve it with {@link resolveGuardPolicy}); any other value fails naming the choices.
 */
export function guardPolicyNameSchema(field: string) {
  return z.enum(ACCEPTED_GUARD_POLICY_NAMES, {
    error: (issue) => `expected \`${field}\` to be one of ${GUARD_POLICIES.join(', ')}, got ${JSON.stringify(issue.input)?.slice(0, 80)}`,
  });
}

/** The policy an evaluation runs under: `name` resolved, or the default when none was given. */
export function effectiveGuardPolicy(name: string | undefined): string {
  if (name === undefined) return DEFAULT_GUARD_POLICY;
  return resolveGuardPolicy(name) ?? name;
}
