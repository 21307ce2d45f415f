/**
 * The command was misused (missing file, bad flag value): exit status 2 and one line on stderr
 * saying what to do.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
