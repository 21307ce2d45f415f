/** The flags and the config together do not make a runnable plan; the message names what to pass. */
export class OptimizeRequestError extends Error {
  override readonly name = 'OptimizeRequestError';
}
