import { mkdir, readdir, rm, stat, symlink } from 'node:fs/promises';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { defaultBaselineCacheDirectory } from './baseline-cache.js';
import { readBuildCacheEntry, writeBuildCacheEntry, type BuildCacheEntry } from './build-cache-entry.js';
import type { BuildKeyMaterial } from './build-key.js';
import { captureBuild, restoreBuild } from './build-snapshot.js';
import { directorySizeBytes } from './directory-size.js';
import { acquireFileLock, isFileLockHeld, tryAcquireFileLock, type FileLockOptions, type HeldLock } from '../pipeline/file-lock.js';

/** Default bound of the build cache: 20 GiB (a CUDA extension's folder is 5–50 MB). */
export const DEFAULT_BUILD_CACHE_MAX_BYTES = 20 * 1024 ** 3;

const KEY_PATTERN = /^[0-9a-f]{64}$/;

export interface BuildCacheOptions {
  /** The cache folder, e.g. `<cacheRoot>/builds` (see {@link defaultBuildCacheDirectory}). */
  directory: string;
  /**
   * Where each reserved key's stable build path is linked to the candidate's own build folder
   * (default `staging` beside `directory`, the folder workers see read-only).
   */
  stagingDirectory?: string;
  /** Size bound in bytes; least recently used entries are removed past it. */
  maxBytes?: number;
  lock?: FileLockOptions;
  logger?: Logger;
  now?: () => Date;
}

/** The candidate's own build folder (in its scratch), where it compiles. */
export interface BuildWorkspace {
  directory: string;
  /** The candidate's uid when kforge runs as root and the sandbox gave it one (copies are given to it); else null. */
  ownerUid: number | null;
}

/** One build key held by one evaluation (no other evaluation builds it meanwhile). */
export interface BuildReservation {
  key: string;
  /**
   * The folder to pass as `build_dir` (`TORCH_EXTENSIONS_DIR`): `<staging>/<key>`, a link to the
   * workspace, so the paths ninja records are the same in every evaluation of the key.
   */
  directory: string;
  /** A build of this key completed before and its verified copy is in the workspace, so the worker should find nothing to compile. */
  previouslyBuilt: boolean;
  /**
   * Records how the build went (`cacheHit` as the worker reported it: null when it built no
   * extension or never said); a new complete build is copied from the workspace into the cache
   * with its digests. Frees the key and evicts past the bound. Idempotent.
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
 * Builds addressed by {@link buildKey}: the same candidate source on the same toolchain and
 * architecture is compiled once, across evaluations, runs and processes. The candidate never
 * writes here: it builds in its own scratch folder, and the parent copies a finished build into
 * `<directory>/<key>` with the SHA-256 of every file recorded in `<key>.json`; a later evaluation
 * gets a copy of it in its own scratch, each file checked against its digest first (a mismatch is
 * a miss and a logged warning, and the entry is dropped). A key is reserved under a lock file
 * (`<key>.lock`, stale locks of dead processes taken over), so two concurrent evaluations of one
 * source build once: the second waits and then finds it built. Torch's batons
 * (`<extension>/lock`) are never copied.
 */
export class BuildCache {
  readonly directory: string;
  readonly stagingDirectory: string;
  readonly maxBytes: number;
  readonly #lock: FileLockOptions;
  readonly #logger: Logger;
  readonly #now: () => Date;

  constructor(options: BuildCacheOptions) {
    this.directory = options.directory;
    this.stagingDirectory = options.stagingDirectory ?? path.join(path.dirname(options.directory), 'staging');
    this.maxBytes = options.maxBytes ?? DEFAULT_BUILD_CACHE_MAX_BYTES;
    if (!Number.isFinite(this.maxBytes) || this.maxBytes < 0) {
      throw new RangeError(`expected the build cache bound to be a non-negative number of bytes, got ${this.maxBytes}`);
    }
    this.#lock = options.lock ?? {};
    this.#logger = options.logger ?? pino({ level: 'silent' });
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * Waits until `key` is free and reserves it for a candidate building in `workspace`; a complete,
   * verified build of the key is copied there first. An abort rejects with EvaluationCancelledError.
   */
  async reserve(key: string, material: BuildKeyMaterial, workspace: BuildWorkspace, signal?: AbortSignal): Promise<BuildReservation> {
    this.#checkKey(key);
    await Promise.all([mkdir(this.directory, { recursive: true }), mkdir(this.stagingDirectory, { recursive: true })]);
    const lock = await acquireFileLock(this.#lockFile(key), this.#lock, signal);
    try {
      let previous = await readBuildCacheEntry(this.#entryFile(key));
      let previouslyBuilt = false;
      if (previous?.complete && previous.files) {
        const restored = await restoreBuild(this.#folder(key), workspace.directory, previous.files, workspace.ownerUid);
        previouslyBuilt = restored.ok;
        if (!restored.ok) {
          this.#logger.warn(
            { key, file: restored.file, why: restored.why },
            'build cache entry does not match its recorded digests; it is dropped and the candidate builds again',
          );
          await rm(this.#folder(key), { recursive: true, force: true, maxRetries: 3 });
          previous = { ...previous, complete: false, files: {} };
        }
      }
      const link = path.join(this.stagingDirectory, key);
      await rm(link, { force: true });
      await symlink(workspace.directory, link, 'dir');
      return this.#reservation(key, material, workspace, link, previous, previouslyBuilt, lock);
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

  #reservation(
    key: string,
    material: BuildKeyMaterial,
    workspace: BuildWorkspace,
    link: string,
    previous: BuildCacheEntry | null,
    previouslyBuilt: boolean,
    lock: HeldLock,
  ): BuildReservation {
    let finished = false;
    const unlink = (): Promise<void> => rm(link, { force: true });
    return {
      key,
      directory: link,
      previouslyBuilt,
      finish: async ({ built, cacheHit }) => {
        if (finished) return;
        finished = true;
        const nowIso = this.#now().toISOString();
        try {
          await unlink();
          let files = previouslyBuilt ? previous?.files : undefined;
          let sizeBytes = previouslyBuilt ? (previous?.size_bytes ?? 0) : 0;
          if (built && (cacheHit !== true || !previouslyBuilt)) {
            const captured = await captureBuild(workspace.directory, this.#folder(key));
            files = captured?.files;
            sizeBytes = captured?.sizeBytes ?? 0;
            if (!captured) this.#logger.warn({ key }, 'a build larger than the largest kept (2 GiB) is not cached');
          } else if (!built) {
            await rm(this.#folder(key), { recursive: true, force: true, maxRetries: 3 });
            files = undefined;
            sizeBytes = 0;
          }
          await writeBuildCacheEntry(this.#entryFile(key), {
            key,
            material,
            created_at: previous?.created_at ?? nowIso,
            last_used_at: nowIso,
            size_bytes: sizeBytes,
            uses: (previous?.uses ?? 0) + 1,
            builds: (previous?.builds ?? 0) + (cacheHit === false || !built ? 1 : 0),
            hits: (previous?.hits ?? 0) + (cacheHit === true ? 1 : 0),
            complete: built && files !== undefined,
            ...(files ? { files } : {}),
          });
        } finally {
          await lock.release();
        }
        if (cacheHit !== true) await this.evict();
      },
      abandon: async () => {
        if (finished) return;
        finished = true;
        try {
          await unlink();
        } finally {
          await lock.release();
        }
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
    const keys = new Set(names.map((name) => name.replace(/\.(json|lock)$/, '')).filter((name) => KEY_PATTERN.test(name)));
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
