/** A problem argument of `kforge optimize` that cannot be used; `path` is the argument as given. */
export class SuiteError extends Error {
  override readonly name = 'SuiteError';

  constructor(
    message: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
