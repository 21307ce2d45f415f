import { Redis } from 'ioredis';
import { RedisUnreachableError } from './redis-unreachable-error.js';

/** How long the first connection may take before Redis counts as unreachable, in ms. */
export const DEFAULT_REDIS_CONNECT_TIMEOUT_MS = 5000;

/** Longest wait between two reconnection tries after Redis went away, in ms. */
const MAX_RECONNECT_DELAY_MS = 1000;

/** Connection options of every kforge Redis client (BullMQ's included). */
export interface RedisConnectionOptions {
  url: string;
  /** Commands wait for a reconnection instead of failing: a Redis restart is survived. */
  maxRetriesPerRequest: null;
  enableOfflineQueue: true;
  retryStrategy: (times: number) => number;
}

/** A Redis URL as it may be shown: any password replaced by `***`. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}

/** The port of a Redis URL (6379 when it names none). */
function portOf(url: URL): number {
  return url.port ? Number(url.port) : 6379;
}

/**
 * Checks a Redis URL (`redis://` or `rediss://`) and gives the options kforge's clients use:
 * reconnect quickly and forever, and let commands wait across a reconnection.
 * Throws {@link RedisUnreachableError} for a URL that is not a Redis URL.
 */
export function redisConnectionOptions(url: string): RedisConnectionOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new RedisUnreachableError(redactRedisUrl(url), 6379, { cause: error });
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new RedisUnreachableError(redactRedisUrl(url), portOf(parsed), {
      cause: new Error(`expected a redis:// or rediss:// URL, got \`${parsed.protocol}\``),
    });
  }
  return {
    url,
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    retryStrategy: (times) => Math.min(100 * times, MAX_RECONNECT_DELAY_MS),
  };
}

/**
 * A connected ioredis client, or {@link RedisUnreachableError} when Redis does not answer a PING
 * within `connectTimeoutMs`. Once connected, the client reconnects by itself.
 */
export async function connectRedis(url: string, options: { connectTimeoutMs?: number; connectionName?: string } = {}): Promise<Redis> {
  const { url: _url, ...connection } = redisConnectionOptions(url);
  const client = new Redis(url, { ...connection, lazyConnect: true, ...(options.connectionName ? { connectionName: options.connectionName } : {}) });
  // Errors while reconnecting are expected (a restarting Redis); commands wait meanwhile.
  client.on('error', () => undefined);
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_REDIS_CONNECT_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect().then(() => client.ping()),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return client;
  } catch (error) {
    client.disconnect();
    throw new RedisUnreachableError(redactRedisUrl(url), portOf(new URL(url)), { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/** How long closing a client may wait for Redis to take its QUIT, in ms (Redis may be down). */
const QUIT_WAIT_MS = 2000;

/** Closes a client: QUIT when Redis answers soon, else a plain disconnect (never waits for a Redis that is down). */
export async function quitRedis(client: Redis): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const quit = client.quit().then(
    () => true,
    () => false,
  );
  const waited = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), QUIT_WAIT_MS)));
  const quitted = await Promise.race([quit, waited]);
  clearTimeout(timer);
  if (!quitted) client.disconnect();
}

/** Waits for `work` at most `ms` milliseconds (a Redis command while Redis may be down); never rejects. */
export async function settleWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
