import type { Redis } from 'ioredis';
import { DeviceLockHeldError } from '../../eval/pipeline/device-lock-held-error.js';
import { deviceLockKey } from './redis-keys.js';

/** Renews the lock if this owner holds it, takes it again if it expired; 1 when held afterwards. */
const RENEW_SCRIPT = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`;

/** Deletes the lock only if this owner holds it. */
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

export interface RedisDeviceLocksOptions {
  redis: Redis;
  /** The host the devices are on (the lock is per host and device). */
  host: string;
  /** Host-wide device names, e.g. `gpu0` or a GPU UUID. */
  devices: readonly string[];
  /** The owner's id (the worker id). */
  ownerId: string;
  /** Lock lifetime in ms; the owner renews it well before (every heartbeat). */
  ttlMs: number;
}

/**
 * Exclusive ownership of a host's devices across workers, through Redis keys that expire:
 * `kforge:device:<host>:<device>` holds the owning worker's id. {@link acquire} takes all or
 * none; {@link renew} keeps them (and says which were lost); {@link release} frees them.
 */
export class RedisDeviceLocks {
  readonly #options: RedisDeviceLocksOptions;
  #held = false;

  constructor(options: RedisDeviceLocksOptions) {
    if (!Number.isInteger(options.ttlMs) || options.ttlMs < 1) throw new RangeError(`expected \`ttlMs\` to be a positive integer, got ${options.ttlMs}`);
    this.#options = options;
  }

  /** The Redis keys of the locks. */
  get keys(): string[] {
    return this.#options.devices.map((device) => deviceLockKey(this.#options.host, device));
  }

  /** Takes every lock, or none: throws {@link DeviceLockHeldError} naming the first one another worker holds. */
  async acquire(): Promise<void> {
    const { redis, ownerId, ttlMs, host, devices } = this.#options;
    const taken: string[] = [];
    for (const [index, key] of this.keys.entries()) {
      const set = await redis.set(key, ownerId, 'PX', ttlMs, 'NX');
      if (set === 'OK') {
        taken.push(key);
        continue;
      }
      const [holder, expiresInMs] = await Promise.all([redis.get(key), redis.pttl(key)]);
      if (holder === ownerId) {
        taken.push(key);
        continue;
      }
      await Promise.all(taken.map((owned) => redis.eval(RELEASE_SCRIPT, 1, owned, ownerId)));
      throw new DeviceLockHeldError({ host, device: devices[index]!, lockKey: key, holder, expiresInMs: expiresInMs >= 0 ? expiresInMs : null });
    }
    this.#held = true;
  }

  /** Extends every lock by the TTL (taking back any that expired); returns the devices another worker took meanwhile. */
  async renew(): Promise<string[]> {
    if (!this.#held) return [];
    const { redis, ownerId, ttlMs, devices } = this.#options;
    const kept = await Promise.all(this.keys.map((key) => redis.eval(RENEW_SCRIPT, 1, key, ownerId, String(ttlMs))));
    return devices.filter((_, index) => kept[index] !== 1);
  }

  /** Frees the locks this owner still holds. */
  async release(): Promise<void> {
    if (!this.#held) return;
    this.#held = false;
    const { redis, ownerId } = this.#options;
    await Promise.all(this.keys.map((key) => redis.eval(RELEASE_SCRIPT, 1, key, ownerId)));
  }
}
