/**
 * The guard policies, defined once for the TypeScript side: `kforge eval`, `kforge optimize`, the
 * reward API, the dashboard and the reports all read this file, mostly through guard-policy.ts,
 * which re-exports it and adds the aliases and the schemas (this file stays free of zod, so that a
 * command's `--help` lists the policies without loading it). The worker's own list is
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

/** One line per policy, for `--help` and the documentation. */
export const GUARD_POLICY_DESCRIPTIONS: Readonly<Record<GuardPolicyName, string>> = {
  kernelbench: "KernelBench's rule: PyTorch operators beside your kernels allowed and reported",
  'own-kernels': 'every compute operator must be your own kernel; vendor libraries allowed',
  strict: 'own-kernels without vendor libraries',
  permissive: 'findings recorded, never rejected for PyTorch use; your own kernel must still run',
  pytorch: 'permissive, and no kernel of your own required: for measuring plain PyTorch programs',
};

/** `kernelbench (KernelBench's rule: …), own-kernels (…), …` for `--help`. */
export function guardPolicyHelp(): string {
  return GUARD_POLICIES.map((name) => `${name} (${GUARD_POLICY_DESCRIPTIONS[name]})`).join(', ');
}
