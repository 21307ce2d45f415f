import { mkdir, readdir, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { defaultBaselineCacheDirectory } from './baseline-cache.js';
import { readBuildCacheEntry, writeBuildCacheEntry, type BuildCacheEntry } from './build-cache-entry.js';
import type { BuildKeyMaterial } from './build-key.js';
import { directorySizeBytes } from './directory-size.js';
import { acquireFileLock, isFileLockHeld, tryAcquireFileLock, type FileLockOptions, type HeldLock } from './file-lock.js';

/** Default bound of the build cache: 20 GiB (a CUDA extension's folder is 5–50 MB). */
export const DEFAULT_BUILD_CACHE_MAX_BYTES = 20 * 1024 ** 3;

const KEY_PATTERN = /^[0-9a-f]{64}$/;

export interface BuildCacheOptions {
  /** The cache folder, e.g. `<cacheRoot>/builds` (see {@link defaultBuildCacheDirectory}). */
  directory: string;
  /** Size bound in bytes; least recently used entries are removed past it. */
  maxBytes?: number;
  lock?: FileLockOptions;
  logger?: Logger;
  now?: () => Date;
}

/** One build folder held by one evaluation (no other process builds in it meanwhile). */
export interface BuildReservation {
  key: string;
  /** The folder to pass as `build_dir` (`TORCH_EXTENSIONS_DIR`). */
  directory: string;
  /** A build of this key completed before, so the worker should find nothing to compile. */
  previouslyBuilt: boolean;
  /**
   * Records how the build went (`cacheHit` as the worker reported it: null when it built no
   * extension or never said), frees the folder and evicts past the bound. Idempotent.
   */
  finish(outcome: { built: boolean; cacheHit: boolean | null }): Promise<void>;
  /** Frees the folder without recording a use (the evaluation never got to build). Idempotent. */
  abandon(): Promise<void>;
}

/** What `kforge cache stats` shows of the build cache. */
export interface BuildCacheStats {
  directory: string;
  entries: number;
  totalBytes: number;
  maxBytes: number;
  /** Entries an evaluation holds right now. */
  inUse: number;
  uses: number;
  builds: number;
  hits: number;
  /** ISO 8601 times of the least and the most recent use; null when empty. */
  oldestUseAt: string | null;
  newestUseAt: string | null;
}

/** `<cacheRoot>/builds`, where `<cacheRoot>` is `$KFORGE_CACHE_DIR` or `.kforge` in the working directory. */
export function defaultBuildCacheDirectory(environment: NodeJS.ProcessEnv = process.env, workingDirectory: string = process.cwd()): string {
  return path.join(path.dirname(defaultBaselineCacheDirectory(environment, workingDirectory)), 'builds');
}

/** The variable that sets the build cache's bound, in GiB (decimals allowed). */
export const BUILD_CACHE_MAX_GB_VARIABLE = 'KFORGE_BUILD_CACHE_MAX_GB';

/**
 * The bound set by `KFORGE_BUILD_CACHE_MAX_GB`, in bytes; the default when it is unset. A value
 * that is not a non-negative number throws a RangeError that names the variable and the value.
 */
export function buildCacheMaxBytes(environment: NodeJS.ProcessEnv = process.env): number {
  const raw = environment[BUILD_CACHE_MAX_GB_VARIABLE]?.trim();
  if (raw === undefined || raw === '') return DEFAULT_BUILD_CACHE_MAX_BYTES;
  const gib = Number(raw);
  if (!Number.isFinite(gib) || gib < 0) {
    throw new RangeError(`expected ${BUILD_CACHE_MAX_GB_VARIABLE} to be a non-negative number of GiB, got \`${raw}\``);
  }
  return Math.round(gib * 1024 ** 3);
}

interface Listed {
  key: string;
  entry: BuildCacheEntry | null;
  sizeBytes: number;
  lastUsedMs: number;
}

/**
 * Build folders addressed by {@link buildKey}: the same candidate source on the same toolchain and
 * architecture is compiled once, across evaluations, runs and processes. A folder is reserved under
 * a lock file (`<key>.lock`, stale locks of dead processes taken over), so two concurrent
 * evaluations of one source build once: the second waits and then finds it built. Torch's own
 * baton (`<folder>/<extension>/lock`) is not trusted alone: a worker killed mid-build leaves it
 * behind and every later build would wait on it forever, and a waiter whose builder failed imports
 * nothing and would be judged differently; so stale batons are removed while the lock is held.
 */
export class BuildCache {
  readonly directory: string;
  readonly maxBytes: number;
  readonly #lock: FileLockOptions;
  readonly #logger: Logger;
  readonly #now: () => Date;

  constructor(options: BuildCacheOptions) {
    this.directory = options.directory;
    this.maxBytes = options.maxBytes ?? DEFAULT_BUILD_CACHE_MAX_BYTES;
    if (!Number.isFinite(this.maxBytes) || this.maxBytes < 0) {
      throw new RangeError(`expected the build cache bound to be a non-negative number of bytes, got ${this.maxBytes}`);
    }
    this.#lock = options.lock ?? {};
    this.#logger = options.logger ?? pino({ level: 'silent' });
    this.#now = options.now ?? (() => new Date());
  }

  /** Waits until the folder of `key` is free and reserves it; an abort rejects with EvaluationCancelledError. */
  async reserve(key: string, material: BuildKeyMaterial, signal?: AbortSignal): Promise<BuildReservation> {
    this.#checkKey(key);
    await mkdir(this.directory, { recursive: true });
    const lock = await acquireFileLock(this.#lockFile(key), this.#lock, signal);
    try {
      const directory = this.#folder(key);
      await mkdir(directory, { recursive: true });
      await removeTorchBatons(directory);
      const previous = await readBuildCacheEntry(this.#entryFile(key));
      return this.#reservation(key, material, directory, previous, lock);
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /** Counts and sizes of the entries. */
  async stats(): Promise<BuildCacheStats> {
    const listed = await this.#list();
    const inUse = await Promise.all(listed.map((item) => isFileLockHeld(this.#lockFile(item.key), this.#lock)));
    const uses = listed.map((item) => item.lastUsedMs).sort((a, b) => a - b);
    const sum = (pick: (entry: BuildCacheEntry) => number): number => listed.reduce((total, item) => total + (item.entry ? pick(item.entry) : 0), 0);
    return {
      directory: this.directory,
      entries: listed.length,
      totalBytes: listed.reduce((total, item) => total + item.sizeBytes, 0),
      maxBytes: this.maxBytes,
      inUse: inUse.filter(Boolean).length,
      uses: sum((entry) => entry.uses),
      builds: sum((entry) => entry.builds),
      hits: sum((entry) => entry.hits),
      oldestUseAt: uses.length > 0 ? new Date(uses[0]!).toISOString() : null,
      newestUseAt: uses.length > 0 ? new Date(uses[uses.length - 1]!).toISOString() : null,
    };
  }

  /** Removes every entry no evaluation holds; entries in use are left and counted. */
  async clear(): Promise<{ removed: number; freedBytes: number; skippedInUse: number }> {
    let removed = 0;
    let freedBytes = 0;
    let skippedInUse = 0;
    for (const item of await this.#list()) {
      if (await this.#remove(item)) {
        removed += 1;
        freedBytes += item.sizeBytes;
      } else skippedInUse += 1;
    }
    return { removed, freedBytes, skippedInUse };
  }

  /** Removes least recently used entries (not held ones) until the total is within the bound. */
  async evict(): Promise<{ removed: number; freedBytes: number }> {
    const listed = (await this.#list()).sort((a, b) => a.lastUsedMs - b.lastUsedMs);
    let total = listed.reduce((sum, item) => sum + item.sizeBytes, 0);
    let removed = 0;
    let freedBytes = 0;
    for (const item of listed) {
      if (total <= this.maxBytes) break;
      if (!(await this.#remove(item))) continue;
      total -= item.sizeBytes;
      freedBytes += item.sizeBytes;
      removed += 1;
    }
    if (removed > 0) this.#logger.info({ removed, freedBytes, totalBytes: total }, 'evicted build cache entries');
    return { removed, freedBytes };
  }

  #reservation(key: string, material: BuildKeyMaterial, directory: string, previous: BuildCacheEntry | null, lock: HeldLock): BuildReservation {
    let finished = false;
    return {
      key,
      directory,
      previouslyBuilt: previous?.complete === true,
      finish: async ({ built, cacheHit }) => {
        if (finished) return;
        finished = true;
        const nowIso = this.#now().toISOString();
        try {
          await writeBuildCacheEntry(this.#entryFile(key), {
            key,
            material,
            created_at: previous?.created_at ?? nowIso,
            last_used_at: nowIso,
            size_bytes: await directorySizeBytes(directory),
            uses: (previous?.uses ?? 0) + 1,
            builds: (previous?.builds ?? 0) + (cacheHit === false || !built ? 1 : 0),
            hits: (previous?.hits ?? 0) + (cacheHit === true ? 1 : 0),
            complete: built,
          });
        } finally {
          await lock.release();
        }
        if (cacheHit !== true) await this.evict();
      },
      abandon: async () => {
        if (finished) return;
        finished = true;
        await lock.release();
      },
    };
  }

  /** Removes an entry under its lock; false when an evaluation holds it. */
  async #remove(item: Listed): Promise<boolean> {
    const lock = await tryAcquireFileLock(this.#lockFile(item.key), this.#lock);
    if (!lock) return false;
    try {
      await rm(this.#entryFile(item.key), { force: true });
      await rm(this.#folder(item.key), { recursive: true, force: true, maxRetries: 3 });
      return true;
    } finally {
      await lock.release();
    }
  }

  async #list(): Promise<Listed[]> {
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const keys = new Set(names.map((name) => name.replace(/\.json$/, '')).filter((name) => KEY_PATTERN.test(name)));
    const listed: Listed[] = [];
    for (const key of keys) {
      const entry = await readBuildCacheEntry(this.#entryFile(key));
      if (entry) {
        listed.push({ key, entry, sizeBytes: entry.size_bytes, lastUsedMs: Date.parse(entry.last_used_at) });
        continue;
      }
      // A folder without its record: a build that never finished (or a record that was damaged).
      const folder = await stat(this.#folder(key)).catch(() => null);
      listed.push({ key, entry: null, sizeBytes: await directorySizeBytes(this.#folder(key)), lastUsedMs: folder?.mtimeMs ?? 0 });
    }
    return listed;
  }

  #checkKey(key: string): void {
    if (!KEY_PATTERN.test(key)) throw new RangeError(`expected a SHA-256 hex build key, got \`${key}\``);
  }

  #folder(key: string): string {
    return path.join(this.directory, key);
  }

  #entryFile(key: string): string {
    return path.join(this.directory, `${key}.json`);
  }

  #lockFile(key: string): string {
    return path.join(this.directory, `${key}.lock`);
  }
}

/** Removes torch's `FileBaton` files (`<folder>/<extension>/lock`); only safe while the folder is reserved. */
async function removeTorchBatons(directory: string): Promise<void> {
  const extensions = await readdir(directory, { withFileTypes: true });
  for (const extension of extensions) {
    if (extension.isDirectory()) await unlink(path.join(directory, extension.name, 'lock')).catch(() => undefined);
  }
}
