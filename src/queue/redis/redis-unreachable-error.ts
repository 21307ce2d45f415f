/** What to do when no Redis answers, for a URL's port. */
export function startRedisHint(port: number): string {
  return `start one with \`redis-server --port ${port}\` (Debian: apt-get install redis-server)`;
}

/**
 * No Redis answered at the URL within the connect limit (or the URL is not a Redis URL). kforge
 * never starts a Redis itself; the message says how to.
 */
export class RedisUnreachableError extends Error {
  override readonly name = 'RedisUnreachableError';
  /** The URL with any password replaced by `***`. */
  readonly url: string;

  constructor(url: string, port: number, options: { cause?: unknown } = {}) {
    super(`cannot reach Redis at ${url}: ${startRedisHint(port)}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.url = url;
  }
}
