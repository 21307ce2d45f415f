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
    super(
      `candidate ${candidateId} could not be evaluated in ${attempts} attempts, for a reason that is not the candidate's: ${cause.message}; it stays unevaluated and \`kforge optimize --resume\` evaluates it again`,
      { cause },
    );
    this.candidateId = candidateId;
    this.attempts = attempts;
  }
}
