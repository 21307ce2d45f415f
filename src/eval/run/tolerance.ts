import type { Precision, ToleranceProfile } from '../../core/verdict.js';

/** Absolute and relative tolerance: an element passes when |c − r| ≤ atol + rtol·|r|. */
export interface Tolerance {
  atol: number;
  rtol: number;
}

/**
 * The tolerance of a profile at a precision (docs/spec.md section 4): `kernelbench` is atol = rtol = 1e-2
 * everywhere; `strict` is 1e-4 for fp32 and 1e-2 for fp16/bf16.
 */
export function toleranceFor(profile: ToleranceProfile, precision: Precision): Tolerance {
  if (profile === 'strict' && precision === 'fp32') return { atol: 1e-4, rtol: 1e-4 };
  return { atol: 1e-2, rtol: 1e-2 };
}
