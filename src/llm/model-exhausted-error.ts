/** What `ModelExhaustedError` knows. */
export interface ModelExhaustedErrorContext {
  provider: string;
  modelId: string;
  /** Replies served before the source ran out. */
  repliesServed: number;
}

/**
 * A replaying model (a folder of files, a scripted fake) has no reply left. Not retryable: asking
 * again gives the same answer. The search treats it like a model that stopped answering.
 */
export class ModelExhaustedError extends Error {
  override readonly name = 'ModelExhaustedError';
  readonly provider: string;
  readonly modelId: string;
  readonly repliesServed: number;
  readonly isRetryable = false;

  constructor(message: string, context: ModelExhaustedErrorContext) {
    super(message);
    this.provider = context.provider;
    this.modelId = context.modelId;
    this.repliesServed = context.repliesServed;
  }

  static isInstance(error: unknown): error is ModelExhaustedError {
    return error instanceof ModelExhaustedError;
  }
}
