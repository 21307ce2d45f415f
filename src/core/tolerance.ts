import type { Precision, ToleranceProfile } from './verdict.js';

/** Absolute and relative tolerance: an element passes when |c − r| ≤ atol + rtol·|r|. */
export interface Tolerance {
  atol: number;
  rtol: number;
}

/** Where a run's tolerance came from: its profile, or the problem's own declaration (`KFORGE_TOLERANCE`). */
export type ToleranceSource = 'profile' | 'problem';

/** The tolerance a run judges by, with where it came from and the output dtype that decided it. */
export interface RunTolerance extends Tolerance {
  source: ToleranceSource;
  /** The reference output's dtype (`bfloat16`); null until the reference role reports it, or for an output without tensors. */
  dtype: string | null;
}

/** Dtypes narrower than float32, which `strict` holds to 1e-2 as it does fp16 and bf16. */
const NARROW_DTYPES = ['float16', 'bfloat16', 'float8_e4m3fn', 'float8_e5m2'] as const;

/**
 * The tolerance of a profile at a precision (docs/spec.md section 4): `kernelbench` is atol = rtol = 1e-2
 * everywhere; `strict` is 1e-4 for fp32 and 1e-2 for fp16/bf16. Under `native` the output's dtype
 * decides ({@link dtypeTolerances}); this is the value for a dtype the table does not list (float32's).
 */
export function toleranceFor(profile: ToleranceProfile, precision: Precision): Tolerance {
  if (profile === 'strict' && (precision === 'fp32' || precision === 'native')) return { atol: 1e-4, rtol: 1e-4 };
  return { atol: 1e-2, rtol: 1e-2 };
}

/**
 * The profile's tolerance per reference output dtype, for `--precision native`, where the run's
 * dtypes are the problem's own and only the reference role sees them: `strict` holds fp16, bf16
 * and fp8 outputs to 1e-2 (as it does fp16 and bf16 runs), anything else to {@link toleranceFor}'s.
 */
export function dtypeTolerances(profile: ToleranceProfile): Record<string, Tolerance> {
  const narrow = toleranceFor(profile, 'fp16');
  return Object.fromEntries(NARROW_DTYPES.map((dtype) => [dtype, { ...narrow }]));
}

/** Whether a tolerance the problem declares for its output's dtype wins over the profile's: under `kernelbench`, not `strict`. */
export function declaredToleranceWins(profile: ToleranceProfile): boolean {
  return profile === 'kernelbench';
}

/**
 * The reference request's tolerance fields (docs/worker-protocol.md, "Reference role"): the
 * profile's atol/rtol, the per-dtype table under `native`, and whether a declared tolerance wins.
 */
export function referenceToleranceFields(
  profile: ToleranceProfile,
  precision: Precision,
): { atol: number; rtol: number; dtype_tolerances?: Record<string, Tolerance>; declared_tolerance: boolean } {
  const { atol, rtol } = toleranceFor(profile, precision);
  return {
    atol,
    rtol,
    ...(precision === 'native' ? { dtype_tolerances: dtypeTolerances(profile) } : {}),
    declared_tolerance: declaredToleranceWins(profile),
  };
}

/** The profile's tolerance before the reference role reports the run's own. */
export function profileTolerance(profile: ToleranceProfile, precision: Precision): RunTolerance {
  return { ...toleranceFor(profile, precision), source: 'profile', dtype: null };
}
