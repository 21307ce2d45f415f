/**
 * Longer than convention 4's 300 lines: `BuildCache` is one cache's protocol between processes:
 * reserve, record use, capture, make room, evict and clear take the same per-key lock files and
 * entry records, and the order they take them in is what keeps concurrent kforge processes safe.
 */
import { mkdir, readdir, rm, stat, symlink } from 'node:fs/promises';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { defaultBaselineCacheDirectory } from './baseline-cache.js';
import { readBuildCacheEntry, writeBuildCacheEntry, type BuildCacheEntry } from './build-cache-entry.js';
import type { BuildKeyMaterial } from './build-key.js';
import { captureBuild, MAX_BUILD_SNAPSHOT_BYTES, restoreBuild, type BuildDigests } from './build-snapshot.js';
import { directorySizeBytes } from './directory-size.js';
import { acquireFileLock, isFileLockHeld, tryAcquireFileLock, type FileLockOptions, type HeldLock } from '../locks/file-lock.js';

/** Default bound of the build cache: 20 GiB (a CUDA extension's folder is 5–50 MB). */
export const DEFAULT_BUILD_CACHE_MAX_BYTES = 20 * 1024 ** 3;
/** Default bound of one entry (one build): 1 GiB. */
export const DEFAULT_BUILD_CACHE_MAX_ENTRY_BYTES = MAX_BUILD_SNAPSHOT_BYTES;

const KEY_PATTERN = /^[0-9a-f]{64}$/;

export interface BuildCacheOptions {
  /** The cache folder, e.g. `<cacheRoot>/builds` (see {@link defaultBuildCacheDirectory}). */
  directory: string;
  /**
   * Where each reserved key's stable build path is linked to the candidate's own build folder
   * (default `staging` beside `directory`, the folder workers see read-only).
   */
  stagingDirectory?: string;
  /**
   * Size bound in bytes (default {@link DEFAULT_BUILD_CACHE_MAX_BYTES}): a new build evicts least
   * recently used entries to fit, and is not kept when the entries in use leave it no room.
   */
  maxBytes?: number;
  /** Bytes one build may have (default {@link DEFAULT_BUILD_CACHE_MAX_ENTRY_BYTES}); a larger one is not kept. */
  maxEntryBytes?: number;
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
   * When the build stage ends: takes the stable path down and notes how the build went (`cacheHit`
   * as the worker reported it: null when it built no extension or never said). With nothing new to
   * copy (a failed build, a reuse) the use is recorded and the key freed at once; a new complete
   * build keeps the key until {@link release}, which copies it once nothing of the candidate runs
   * any more. Idempotent.
   */
  record(outcome: BuildOutcome): Promise<void>;
  /**
   * Once the candidate's whole process tree is gone: copies the new build that {@link record}
   * noted (if any) from the workspace into the cache with its digests, records the use, frees the
   * key and evicts past the bound. Without `record` first it frees the key without recording a use
   * (the evaluation never got to build). A build that is refused (sparse, too large, no room) is
   * logged and not kept; it never throws for the candidate's files. Idempotent.
   */
  release(): Promise<void>;
  /** `record` then `release`, for a caller whose candidate has no process left when its build ends. */
  finish(outcome: BuildOutcome): Promise<void>;
  /** The same as {@link release}. */
  abandon(): Promise<void>;
}

/** How a build stage went, as the worker reported it. */
export interface BuildOutcome {
  built: boolean;
  cacheHit: boolean | null;
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
 * writes here: it builds in its own scratch folder, and once its processes are gone the parent
 * copies a finished build into `<directory>/<key>` (build-snapshot.ts: by descriptor, no link
 * followed, sparse files refused, streamed) with the SHA-256 of every file recorded in
 * `<key>.json`; a later evaluation gets a copy of it in its own scratch, each file checked against
 * its digest first (a mismatch is a miss and a logged warning, and the entry is dropped). A key is
 * reserved under a lock file (`<key>.lock`, stale locks of dead processes taken over), held from
 * the reservation until the new build is copied, so two concurrent evaluations of one source build
 * once: the second waits and then finds it built. Torch's batons (`<extension>/lock`) are never
 * copied. Sizes are the bytes of the copies (never sparse): one build may have
 * {@link maxEntryBytes}, and a new one evicts least recently used entries until the cache fits
 * {@link maxBytes} with it, or is not kept when the entries in use leave no room (a capture in
 * progress may pass the bound by its own size until then).
 */
export class BuildCache {
  readonly directory: string;
  readonly stagingDirectory: string;
  readonly maxBytes: number;
  readonly maxEntryBytes: number;
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
    this.maxEntryBytes = options.maxEntryBytes ?? DEFAULT_BUILD_CACHE_MAX_ENTRY_BYTES;
    if (!Number.isFinite(this.maxEntryBytes) || this.maxEntryBytes < 0) {
      throw new RangeError(`expected the build cache's bound of one entry to be a non-negative number of bytes, got ${this.maxEntryBytes}`);
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
    let outcome: BuildOutcome | null = null;
    let recording: Promise<void> | null = null;
    let releasing: Promise<void> | null = null;
    const unlink = (): Promise<void> => rm(link, { force: true });
    // A new complete build is copied only in `release`, once the candidate's processes are gone.
    const captureDue = ({ built, cacheHit }: BuildOutcome): boolean => built && (cacheHit !== true || !previouslyBuilt);
    const settle = async (): Promise<void> => {
      try {
        await unlink();
        if (outcome) await this.#recordUse(key, material, workspace, previous, previouslyBuilt, outcome, captureDue(outcome));
      } finally {
        await lock.release();
      }
      if (outcome && outcome.cacheHit !== true) await this.evict();
    };
    const release = (): Promise<void> => {
      releasing ??= (async () => {
        await recording?.catch(() => undefined);
        if (!outcome || captureDue(outcome)) await settle();
      })();
      return releasing;
    };
    const record = (reported: BuildOutcome): Promise<void> => {
      if (outcome || releasing) return recording ?? Promise.resolve();
      outcome = { built: reported.built, cacheHit: reported.cacheHit };
      const noted = outcome;
      recording = (async () => {
        if (captureDue(noted)) await unlink();
        else await settle();
      })();
      return recording;
    };
    return {
      key,
      directory: link,
      previouslyBuilt,
      record,
      release,
      finish: async (reported) => {
        await record(reported);
        await release();
      },
      abandon: release,
    };
  }

  /** Writes the record of one use, with a copy of the new build when `capture` (see {@link #capture}). */
  async #recordUse(
    key: string,
    material: BuildKeyMaterial,
    workspace: BuildWorkspace,
    previous: BuildCacheEntry | null,
    previouslyBuilt: boolean,
    { built, cacheHit }: BuildOutcome,
    capture: boolean,
  ): Promise<void> {
    const nowIso = this.#now().toISOString();
    let files = previouslyBuilt ? previous?.files : undefined;
    let sizeBytes = previouslyBuilt ? (previous?.size_bytes ?? 0) : 0;
    if (capture) {
      const captured = await this.#capture(key, workspace);
      files = captured?.files;
      sizeBytes = captured?.sizeBytes ?? 0;
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
  }

  /**
   * Copies the workspace into `<directory>/<key>` (captureBuild: by descriptor, no link followed,
   * sparse files refused, at most {@link maxEntryBytes}), then evicts least recently used entries
   * until the total fits {@link maxBytes} with it. Null, with a warning and the key's folder
   * removed, when the build is refused, cannot be copied, or finds no room (the entries left are
   * in use): the evaluation goes on, the build is just not cached.
   */
  async #capture(key: string, workspace: BuildWorkspace): Promise<{ files: BuildDigests; sizeBytes: number } | null> {
    const folder = this.#folder(key);
    const drop = async (details: Record<string, unknown>, message: string): Promise<null> => {
      this.#logger.warn({ key, ...details }, message);
      await rm(folder, { recursive: true, force: true, maxRetries: 3 });
      return null;
    };
    try {
      await this.#removeTemporaries(key);
      const captured = await captureBuild(workspace.directory, folder, { maxBytes: Math.min(this.maxEntryBytes, this.maxBytes) });
      if (!captured.ok) {
        return await drop({ why: captured.why, file: captured.file, detail: captured.detail }, `a build is not cached (${captured.why}): ${captured.detail}`);
      }
      if (!(await this.#makeRoom(key, captured.sizeBytes))) {
        return await drop(
          { sizeBytes: captured.sizeBytes, maxBytes: this.maxBytes },
          'a build is not cached: the entries in use leave it no room within the bound of the build cache',
        );
      }
      return captured;
    } catch (error) {
      return await drop({ err: error }, 'could not copy a build into the build cache; it is not cached');
    }
  }

  /** Evicts least recently used entries (not `key`, not held ones) until `bytes` more fit the bound; whether they do. */
  async #makeRoom(key: string, bytes: number): Promise<boolean> {
    const others = (await this.#list()).filter((item) => item.key !== key).sort((a, b) => a.lastUsedMs - b.lastUsedMs);
    let total = others.reduce((sum, item) => sum + item.sizeBytes, 0);
    let removed = 0;
    for (const item of others) {
      if (total + bytes <= this.maxBytes) break;
      if (!(await this.#remove(item))) continue;
      total -= item.sizeBytes;
      removed += 1;
    }
    if (removed > 0) this.#logger.info({ removed, totalBytes: total, addedBytes: bytes }, 'evicted build cache entries to make room for a build');
    return total + bytes <= this.maxBytes;
  }

  /** Removes temporary copies of `key` left by a capture that never ended (under the key's lock, none is under way). */
  async #removeTemporaries(key: string): Promise<void> {
    const names = await readdir(this.directory).catch(() => [] as string[]);
    const prefix = `${key}.tmp-`;
    await Promise.all(
      names.filter((name) => name.startsWith(prefix)).map((name) => rm(path.join(this.directory, name), { recursive: true, force: true, maxRetries: 3 })),
    );
  }

  /** Removes an entry under its lock; false when an evaluation holds it. */
  async #remove(item: Listed): Promise<boolean> {
    const lock = await tryAcquireFileLock(this.#lockFile(item.key), this.#lock);
    if (!lock) return false;
    try {
      await rm(this.#entryFile(item.key), { force: true });
      await rm(this.#folder(item.key), { recursive: true, force: true, maxRetries: 3 });
      await this.#removeTemporaries(item.key);
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
