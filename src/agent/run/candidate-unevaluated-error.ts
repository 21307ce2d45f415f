import { MachineFaultError } from '../../eval/machine-fault-error.js';
import { limitFlag } from '../../eval/run/stage-limits.js';

/**
 * The machine could not evaluate a candidate after every attempt (docs/spec.md section 3): the
 * candidate stays in the store without an evaluation — pending, so `kforge optimize --resume`
 * evaluates it again — and the search stops with the cause. Never a verdict or a penalty.
 */
export class CandidateUnevaluatedError extends Error {
  override readonly name = 'CandidateUnevaluatedError';
  readonly candidateId: number;
  readonly attempts: number;

  constructor(candidateId: number, attempts: number, cause: Error) {
    // A reference too slow for its stage at these sizes fails again under the same settings, which
    // a resume keeps: the way on is a longer limit or smaller sizes (docs/sizes.md).
    const next =
      cause instanceof MachineFaultError && cause.resource === 'time'
        ? `it stays unevaluated; a resume keeps the settings that cannot fit, so start the run again with a longer ${limitFlag(cause.stage ?? 'reference')} or the problem at smaller sizes (kforge optimize … --set NAME=VALUE)`
        : 'it stays unevaluated and `kforge optimize --resume` evaluates it again';
    super(
      `candidate ${candidateId} could not be evaluated in ${attempts} attempt${attempts === 1 ? '' : 's'}, for a reason that is not the candidate's: ${cause.message}; ${next}`,
      { cause },
    );
    this.candidateId = candidateId;
    this.attempts = attempts;
  }
}
