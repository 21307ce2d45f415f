import { z } from 'zod';

/**
 * The guard policies, defined once for the TypeScript side: `kforge eval`, `kforge optimize`, the
 * reward API, the dashboard and the reports all read this file. The worker's own list is
 * `POLICY_NAMES` in `worker/kforge_worker/guard/policy.py`; `guard-policy.test.ts` checks that the two
 * agree (names, default, aliases, which policies reject PyTorch compute and which waive the
 * own-work rule).
 *
 * What each policy allows (docs/spec.md section 8, docs/guard.md):
 * - `kernelbench` (default): KernelBench's rule; PyTorch compute in `forward` and ATen calls inside
 *   the extension are allowed and reported (attribution); vendor libraries allowed.
 * - `own-kernels`: every compute operator that runs must be the candidate's own; vendor libraries allowed.
 * - `strict`: `own-kernels` without vendor libraries (and native low precision rejected in fp32).
 * - `permissive`: static findings recorded, PyTorch compute beside an own kernel reported; never
 *   rejected for PyTorch use.
 * - `pytorch`: `permissive` without the own-work rule, for measuring a PyTorch program as a
 *   candidate (a PyTorch-level rewrite, the project's own fast tests and benchmarks); every other
 *   run-time check still rejects.
 *
 * Under every policy but `pytorch`, a candidate is rejected when no kernel of its own ran or a
 * fallback ran instead of it, decided from what ran (docs/spec.md section 8).
 */
export const GUARD_POLICIES = ['kernelbench', 'own-kernels', 'strict', 'permissive', 'pytorch'] as const;
export type GuardPolicyName = (typeof GUARD_POLICIES)[number];

/** The policy every evaluation runs under unless told otherwise. */
export const DEFAULT_GUARD_POLICY: GuardPolicyName = 'kernelbench';

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

/** One line per policy, for `--help` and the documentation. */
export const GUARD_POLICY_DESCRIPTIONS: Readonly<Record<GuardPolicyName, string>> = {
  kernelbench: "KernelBench's rule: PyTorch operators beside your kernels allowed and reported",
  'own-kernels': 'every compute operator must be your own kernel; vendor libraries allowed',
  strict: 'own-kernels without vendor libraries',
  permissive: 'findings recorded, never rejected for PyTorch use; your own kernel must still run',
  pytorch: 'permissive, and no kernel of your own required: for measuring plain PyTorch programs',
};

/** Policies under which PyTorch compute that ran (and so a substituted operator) is a rejection. */
export const POLICIES_REJECTING_PYTORCH: readonly GuardPolicyName[] = ['own-kernels', 'strict'];

/**
 * Policies that record, instead of rejecting, a candidate whose own kernel did not run or whose
 * fallback ran instead (the worker's `own_work: "note"`); under every other policy that is a
 * rejection (`own-kernel`, `silent-fallback`, `torch-fallback`; docs/guard.md, "What ran").
 */
export const POLICIES_WITHOUT_OWN_WORK_RULE: readonly GuardPolicyName[] = ['pytorch'];

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

/** `kernelbench (KernelBench's rule: …), own-kernels (…), …` for `--help`. */
export function guardPolicyHelp(): string {
  return GUARD_POLICIES.map((name) => `${name} (${GUARD_POLICY_DESCRIPTIONS[name]})`).join(', ');
}
