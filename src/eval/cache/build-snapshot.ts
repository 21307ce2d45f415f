/**
 * Longer than convention 4's 300 lines: capture and restore are the two halves of one snapshot
 * format, sharing its open flags, containment check, streaming copy and digests; what the restore
 * may trust is what the capture guarantees, so the two are read side by side.
 */
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { constants as fsConstants, type BigIntStats } from 'node:fs';
import { chown, lstat, mkdir, open, opendir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** SHA-256 (hex) of each regular file of a build folder, by its path relative to the folder (`/`-separated). */
export type BuildDigests = Record<string, string>;

/** The largest build kept by default: bytes written into the cache (a CUDA extension's folder is 5–50 MB). */
export const MAX_BUILD_SNAPSHOT_BYTES = 1024 ** 3;
/** Most entries (files, folders, anything else) a build folder may list before its capture is refused. */
export const MAX_BUILD_SNAPSHOT_ENTRIES = 10_000;
/** Deepest folder nesting a build folder may have before its capture is refused. */
export const MAX_BUILD_SNAPSHOT_DEPTH = 32;
/**
 * How much longer than its allocated blocks (`st_blocks * 512`) a file may be before it counts as
 * sparse and its build is refused: room for a file system that keeps small files or tails inline.
 */
export const SPARSE_SLACK_BYTES = 64 * 1024;
/** Bytes read and written at a time: no file is ever held whole in memory. */
const CHUNK_BYTES = 1024 ** 2;

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fsConstants;
/** A file of the candidate's: no link followed, and a FIFO swapped in opens at once (then refused by its fstat). */
const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const FOLDER_FLAGS = READ_FLAGS | O_DIRECTORY;
/** A copy: always a new file, never through a link. */
const WRITE_FLAGS = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;

/** Whether a recorded relative path stays inside its folder (no absolute path, no `..`, no empty part). */
export function isContainedPath(relative: string): boolean {
  if (relative === '' || relative.startsWith('/') || relative.includes('\\')) return false;
  return relative.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

/** torch's FileBaton (`<extension>/lock`): a marker of a build in progress, never part of a build. */
function isTorchBaton(relative: string): boolean {
  const parts = relative.split('/');
  return parts.length === 2 && parts[1] === 'lock';
}

/**
 * A file time (ns) as the seconds `utimes` takes, never later than the original: libuv keeps
 * microseconds, and the nanoseconds through a double could round up into the next microsecond
 * (…008642961 ns became …008643000). A copy newer than its original makes ninja's deps log
 * "out of date" (it records each output's time to the nanosecond), and the cached build compiles
 * again; a copy up to 1 µs older changes nothing (inputs are seconds older than their outputs).
 */
export function utimesSeconds(timeNs: bigint): number {
  return Number(timeNs / 1000n) / 1e6;
}

/** Why a build was not captured (nothing of it is kept). */
export type CaptureRefusal =
  /** The build folder is not a folder (a link, say). */
  | 'not-a-folder'
  /** A file is much longer than the blocks it has on disk (see {@link isSparse}). */
  | 'sparse'
  /** The files add up to more than the bytes allowed. */
  | 'too-large'
  /** More entries than {@link MAX_BUILD_SNAPSHOT_ENTRIES} (or the limit given). */
  | 'too-many-entries'
  /** Folders nested deeper than {@link MAX_BUILD_SNAPSHOT_DEPTH} (or the limit given). */
  | 'too-deep'
  /** A name that could not be recorded as a contained relative path (a backslash in it). */
  | 'name'
  /** A regular file or a folder that could not be opened or searched (its permissions, say). */
  | 'unreadable';

/** How {@link captureBuild} went: the digests and bytes of the copy, or why nothing was kept. */
export type CaptureOutcome = { ok: true; files: BuildDigests; sizeBytes: number } | { ok: false; why: CaptureRefusal; file: string | null; detail: string };

export interface CaptureLimits {
  /** Bytes written into the cache at most (the files' lengths added up). Default {@link MAX_BUILD_SNAPSHOT_BYTES}. */
  maxBytes?: number;
  /** Default {@link MAX_BUILD_SNAPSHOT_ENTRIES}. */
  maxEntries?: number;
  /** Default {@link MAX_BUILD_SNAPSHOT_DEPTH}. */
  maxDepth?: number;
  /** For tests: called with each entry's relative path once it was listed and `lstat` looked at it, before it is opened. */
  beforeOpen?: (relative: string) => Promise<void> | void;
}

/**
 * Whether a file is sparse: its length passes its allocated bytes (`st_blocks * 512`) by more than
 * {@link SPARSE_SLACK_BYTES}. Such a file would become real bytes in the copy (a 2 GB file of no
 * blocks, 2 GB of disk in the cache); honest build outputs are never sparse. On a compressing file
 * system (btrfs, ZFS) a file that compresses well counts as sparse too: such a build is not cached.
 */
export function isSparse(info: Pick<BigIntStats, 'size' | 'blocks'>): boolean {
  return info.blocks * 512n + BigInt(SPARSE_SLACK_BYTES) < info.size;
}

/** A refusal thrown out of the walk (caught by {@link captureBuild}). */
class Refused extends Error {
  readonly outcome: Extract<CaptureOutcome, { ok: false }>;
  constructor(why: CaptureRefusal, file: string | null, detail: string) {
    super(detail);
    this.outcome = { ok: false, why, file, detail };
  }
}

const errorCode = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/** Codes of an entry that is no longer a file or a folder where it was listed (gone, replaced by a link, a socket): it is left out. */
const LEFT_OUT_CODES = new Set(['ENOENT', 'ELOOP', 'ENOTDIR', 'ENXIO', 'EOPNOTSUPP', 'ENODEV']);

/** A folder opened without following a link, or null when the path is not one (a link, a file, gone). */
async function openFolder(at: string): Promise<FileHandle | null> {
  let handle: FileHandle;
  try {
    handle = await open(at, FOLDER_FLAGS);
  } catch (error) {
    if (LEFT_OUT_CODES.has(errorCode(error) ?? '')) return null;
    throw error;
  }
  if ((await handle.stat()).isDirectory()) return handle;
  await handle.close();
  return null;
}

/**
 * Whether `/proc/self/fd/<fd>` reaches the very folder open as `handle`: then every entry is looked
 * up through the descriptor (as openat would), and no path is resolved again.
 */
async function reachesThroughProc(handle: FileHandle): Promise<boolean> {
  try {
    const [held, reached] = await Promise.all([handle.stat({ bigint: true }), stat(`/proc/self/fd/${handle.fd}`, { bigint: true })]);
    return held.dev === reached.dev && held.ino === reached.ino;
  } catch {
    return false;
  }
}

/** Writes all of `chunk` at the output's position. */
async function writeAll(output: FileHandle, chunk: Buffer): Promise<void> {
  let offset = 0;
  while (offset < chunk.length) offset += (await output.write(chunk, offset, chunk.length - offset)).bytesWritten;
}

/** Copies at most `size` bytes of `input` (from its start) into `output` through `buffer`, hashing them; the bytes copied. */
async function streamCopy(input: FileHandle, output: FileHandle, size: number, buffer: Buffer, hash: Hash): Promise<number> {
  let position = 0;
  while (position < size) {
    const { bytesRead } = await input.read(buffer, 0, Math.min(buffer.length, size - position), position);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    hash.update(chunk);
    await writeAll(output, chunk);
    position += bytesRead;
  }
  return position;
}

/**
 * Copies the regular files of a candidate's build folder (`source`, which the candidate could
 * write) into `target` (which it cannot), recording each file's SHA-256 on the way; meant to run
 * once nothing of the candidate runs any more, and safe against one still running all the same:
 *
 * - every folder and file is opened with `O_NOFOLLOW` (`O_NONBLOCK` too, so a FIFO cannot hang it)
 *   and judged by `fstat` of that descriptor, then read through it, never opened again by path;
 *   entries are looked up through the open folder's descriptor (`/proc/self/fd/<fd>/<name>`), so
 *   no link is followed anywhere on the way (without a /proc the path is used, its last part
 *   still not followed). Symbolic links, FIFOs, sockets, devices and torch's batons are left out,
 *   and only what `lstat` calls a regular file or folder is opened at all;
 * - a sparse file ({@link isSparse}) refuses the whole build, as do more bytes than
 *   `limits.maxBytes` (counted before each file is copied, so no more is ever written), more
 *   entries than `maxEntries` or deeper folders than `maxDepth`; no more than a file's length at
 *   its fstat is read;
 * - each file is streamed through one 1 MiB buffer and hashed as it is copied.
 *
 * Modification times are kept, so ninja and the worker's `cache_hit` find the build complete. The
 * copy lands in a temporary folder renamed over `target`; a refusal keeps nothing (and leaves
 * `target` as it was). `sizeBytes` is the bytes written; the copies are never sparse, so it is what
 * they occupy, up to each file's last block.
 *
 * Longer than convention 4's 60 lines: it is one walk whose steps (open, judge, copy, descend) share
 * the running byte and entry counts, the one copy buffer and the temporary folder, so that each
 * limit is checked against the whole build at the point it is passed.
 */
export async function captureBuild(source: string, target: string, limits: CaptureLimits = {}): Promise<CaptureOutcome> {
  const maxBytes = limits.maxBytes ?? MAX_BUILD_SNAPSHOT_BYTES;
  const maxEntries = limits.maxEntries ?? MAX_BUILD_SNAPSHOT_ENTRIES;
  const maxDepth = limits.maxDepth ?? MAX_BUILD_SNAPSHOT_DEPTH;
  const root = await openFolder(source);
  if (!root) return { ok: false, why: 'not-a-folder', file: null, detail: `${source} is not a folder` };
  const temporary = `${target}.tmp-${randomBytes(4).toString('hex')}`;
  const files: BuildDigests = {};
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let sizeBytes = 0;
  let entries = 0;
  const throughProc = await reachesThroughProc(root);

  const copyFile = async (at: string, relative: string): Promise<void> => {
    let input: FileHandle;
    try {
      input = await open(at, READ_FLAGS);
    } catch (error) {
      if (LEFT_OUT_CODES.has(errorCode(error) ?? '')) return;
      if (errorCode(error) === 'EACCES' || errorCode(error) === 'EPERM') throw new Refused('unreadable', relative, `${relative} could not be opened`);
      throw error;
    }
    try {
      const info = await input.stat({ bigint: true });
      // Swapped for a FIFO, a socket or a device once listed: opened (O_NONBLOCK) but never read.
      if (!info.isFile()) return;
      if (isSparse(info)) {
        throw new Refused('sparse', relative, `${relative} is ${info.size} bytes long with ${info.blocks * 512n} bytes allocated`);
      }
      const size = Number(info.size);
      if (sizeBytes + size > maxBytes) throw new Refused('too-large', relative, `the build passes ${maxBytes} bytes at ${relative}`);
      const output = await open(path.join(temporary, relative), WRITE_FLAGS, 0o644);
      const hash = createHash('sha256');
      try {
        sizeBytes += await streamCopy(input, output, size, buffer, hash);
        await output.utimes(utimesSeconds(info.atimeNs), utimesSeconds(info.mtimeNs));
      } finally {
        await output.close();
      }
      files[relative] = hash.digest('hex');
    } finally {
      await input.close();
    }
  };

  const walk = async (folder: FileHandle, folderPath: string, relative: string, depth: number): Promise<void> => {
    if (depth > maxDepth) throw new Refused('too-deep', relative, `folders nest deeper than ${maxDepth} at ${relative}`);
    await mkdir(path.join(temporary, relative), { recursive: true, mode: 0o755 });
    const base = throughProc ? `/proc/self/fd/${folder.fd}` : folderPath;
    for await (const entry of await opendir(base)) {
      const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
      entries += 1;
      if (entries > maxEntries) throw new Refused('too-many-entries', child, `the build folder lists more than ${maxEntries} entries`);
      if (!isContainedPath(child)) throw new Refused('name', child, `${JSON.stringify(entry.name)} cannot be recorded as a file name`);
      const at = `${base}/${entry.name}`;
      const info = await lstat(at).catch((error: unknown) => {
        if (LEFT_OUT_CODES.has(errorCode(error) ?? '')) return null;
        throw error;
      });
      await limits.beforeOpen?.(child);
      if (info?.isDirectory()) {
        const inner = await openFolder(at);
        if (!inner) continue;
        try {
          await walk(inner, path.join(folderPath, entry.name), child, depth + 1);
        } finally {
          await inner.close();
        }
      } else if (info?.isFile() && !isTorchBaton(child)) {
        await copyFile(at, child);
      }
    }
  };

  try {
    await walk(root, source, '', 0);
    await rm(target, { recursive: true, force: true, maxRetries: 3 });
    await rename(temporary, target);
    return { ok: true, files, sizeBytes };
  } catch (error) {
    await rm(temporary, { recursive: true, force: true, maxRetries: 3 });
    if (error instanceof Refused) return error.outcome;
    // A folder of the candidate's it may not read or search (its permissions): refused like a file.
    if (errorCode(error) === 'EACCES' || errorCode(error) === 'EPERM') return { ok: false, why: 'unreadable', file: null, detail: (error as Error).message };
    throw error;
  } finally {
    await root.close();
  }
}

/** How {@link restoreBuild} went: restored, or the first file that is missing or differs from its digest. */
export type RestoreOutcome = { ok: true } | { ok: false; file: string; why: 'missing' | 'digest' | 'path' };

/**
 * Copies the files recorded in `files` from the cache folder `source` into a candidate's build
 * folder `target`, checking each one's SHA-256 as it is streamed (no link followed on either side):
 * a file that is missing or differs stops the restore, and its copy is removed (the entry is not to
 * be trusted; the caller treats it as a miss). Only the recorded files are copied, so nothing added
 * to the cache folder afterwards reaches a candidate. With `ownerUid` (the candidate's uid, when
 * kforge runs as root) the copies are given to it, so that the candidate may update its own build.
 */
export async function restoreBuild(source: string, target: string, files: BuildDigests, ownerUid: number | null): Promise<RestoreOutcome> {
  const owner = ownerUid !== null && process.getuid?.() === 0 && ownerUid !== 0 ? ownerUid : null;
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  for (const [relative, digest] of Object.entries(files)) {
    if (!isContainedPath(relative)) return { ok: false, file: relative, why: 'path' };
    let input: FileHandle;
    try {
      input = await open(path.join(source, relative), READ_FLAGS);
    } catch {
      return { ok: false, file: relative, why: 'missing' };
    }
    try {
      const info = await input.stat({ bigint: true });
      if (!info.isFile()) return { ok: false, file: relative, why: 'missing' };
      const parts = relative.split('/');
      for (let depth = 1; depth < parts.length; depth += 1) {
        const folder = path.join(target, ...parts.slice(0, depth));
        await mkdir(folder, { recursive: true, mode: 0o755 });
        if (owner !== null) await chown(folder, owner, owner);
      }
      const copy = path.join(target, relative);
      await rm(copy, { force: true });
      const output = await open(copy, WRITE_FLAGS, 0o644);
      const hash = createHash('sha256');
      let matches = false;
      try {
        await streamCopy(input, output, Number(info.size), buffer, hash);
        matches = hash.digest('hex') === digest;
        if (matches) {
          await output.utimes(utimesSeconds(info.atimeNs), utimesSeconds(info.mtimeNs));
          if (owner !== null) await output.chown(owner, owner);
        }
      } finally {
        await output.close();
      }
      if (!matches) {
        await rm(copy, { force: true });
        return { ok: false, file: relative, why: 'digest' };
      }
    } finally {
      await input.close();
    }
  }
  return { ok: true };
}
