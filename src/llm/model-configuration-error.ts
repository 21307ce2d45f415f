/** What `ModelConfigurationError` knows. */
export interface ModelConfigurationErrorContext {
  /** The provider being set up, as named in the configuration. */
  provider: string;
  /** The setting at fault, as the user writes it (`--base-url`, `OPENAI_API_KEY`, `dir`). */
  setting: string;
  cause?: unknown;
}

/**
 * A model cannot be set up from the configuration: a missing API key, a missing base URL, an
 * unknown provider, an unreadable replay folder. The message says what to set; it never contains a
 * key. Not retryable.
 */
export class ModelConfigurationError extends Error {
  override readonly name = 'ModelConfigurationError';
  readonly provider: string;
  readonly setting: string;
  readonly isRetryable = false;

  constructor(message: string, context: ModelConfigurationErrorContext) {
    super(message, { cause: context.cause });
    this.provider = context.provider;
    this.setting = context.setting;
  }

  static isInstance(error: unknown): error is ModelConfigurationError {
    return error instanceof ModelConfigurationError;
  }
}
