export interface EvaluatorSetupErrorContext {
  /** What to do about it, e.g. "run `kforge doctor`". */
  hint?: string;
  /** The worker's stderr, when it printed something. */
  stderr?: string;
  cause?: unknown;
}

/**
 * The evaluator could not run at all: Python or the worker package is missing, or a worker died
 * before it said hello (before any problem or candidate code ran). The machine's fault, not the
 * candidate's, so it is thrown rather than turned into a verdict.
 */
export class EvaluatorSetupError extends Error {
  override readonly name = 'EvaluatorSetupError';
  readonly hint: string | undefined;
  readonly stderr: string | undefined;

  constructor(message: string, context: EvaluatorSetupErrorContext = {}) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.hint = context.hint;
    this.stderr = context.stderr;
  }
}
