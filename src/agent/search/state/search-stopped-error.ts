/**
 * The run's signal aborted (Ctrl-C, a stop from the dashboard) while a model call or an
 * evaluation was in flight. Not a failure: the work that was interrupted is not recorded as done,
 * so `kforge optimize --resume` picks it up again.
 */
export class SearchStoppedError extends Error {
  override readonly name = 'SearchStoppedError';

  constructor(
    readonly during: 'model-call' | 'evaluation',
    options?: { cause?: unknown },
  ) {
    super(`the search was stopped during a ${during === 'model-call' ? 'model call' : 'evaluation'}`, options);
  }

  static isInstance(error: unknown): error is SearchStoppedError {
    return error instanceof SearchStoppedError;
  }
}
