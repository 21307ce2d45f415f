/**
 * An optimize run could not go on because of kforge's own fault or its surroundings (the store,
 * the evaluator's machinery, an unknown run id), as opposed to a candidate's failure, which is data.
 * The run is left `failed` in the store and can be resumed once the cause is fixed.
 */
export class OptimizeRunError extends Error {
  override readonly name = 'OptimizeRunError';

  constructor(
    readonly runId: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
