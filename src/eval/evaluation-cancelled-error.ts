/** The evaluation was cancelled through its AbortSignal; its workers were killed. */
export class EvaluationCancelledError extends Error {
  override readonly name = 'EvaluationCancelledError';

  constructor(cause?: unknown) {
    super('the evaluation was cancelled', cause === undefined ? undefined : { cause });
  }
}
