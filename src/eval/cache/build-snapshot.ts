import { createHash, randomBytes } from 'node:crypto';
import { chown, lstat, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** SHA-256 (hex) of each regular file of a build folder, by its path relative to the folder (`/`-separated). */
export type BuildDigests = Record<string, string>;

/** The largest build kforge keeps in its cache, in bytes (a CUDA extension's folder is 5–50 MB). */
export const MAX_BUILD_SNAPSHOT_BYTES = 2 * 1024 ** 3;

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

async function copyWithTimes(source: string, target: string, contents: Buffer): Promise<void> {
  const times = await stat(source, { bigint: true });
  await writeFile(target, contents, { mode: 0o644 });
  await utimes(target, utimesSeconds(times.atimeNs), utimesSeconds(times.mtimeNs));
}

/**
 * Copies the regular files of a candidate's build folder (`source`, which the candidate could
 * write) into `target` (which it cannot), recording each file's SHA-256 on the way. Symbolic links,
 * devices, sockets and torch's batons are left out (a link to a secret is never followed);
 * modification times are kept, so ninja and the worker's `cache_hit` find the build complete.
 * The copy lands in a temporary folder renamed over `target`. Null when the build is larger than
 * `maxBytes` (nothing is kept).
 */
export async function captureBuild(
  source: string,
  target: string,
  maxBytes = MAX_BUILD_SNAPSHOT_BYTES,
): Promise<{ files: BuildDigests; sizeBytes: number } | null> {
  const temporary = `${target}.tmp-${randomBytes(4).toString('hex')}`;
  const files: BuildDigests = {};
  let sizeBytes = 0;
  const walk = async (relative: string): Promise<boolean> => {
    const folder = path.join(source, relative);
    await mkdir(path.join(temporary, relative), { recursive: true, mode: 0o755 });
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
      const info = await lstat(path.join(source, child));
      if (info.isDirectory()) {
        if (!(await walk(child))) return false;
      } else if (info.isFile() && !isTorchBaton(child)) {
        sizeBytes += info.size;
        if (sizeBytes > maxBytes) return false;
        const contents = await readFile(path.join(source, child));
        files[child] = createHash('sha256').update(contents).digest('hex');
        await copyWithTimes(path.join(source, child), path.join(temporary, child), contents);
      }
    }
    return true;
  };
  try {
    if (!(await walk(''))) {
      await rm(temporary, { recursive: true, force: true });
      return null;
    }
    await rm(target, { recursive: true, force: true, maxRetries: 3 });
    await rename(temporary, target);
    return { files, sizeBytes };
  } catch (error) {
    await rm(temporary, { recursive: true, force: true });
    throw error;
  }
}

/** How {@link restoreBuild} went: restored, or the first file that is missing or differs from its digest. */
export type RestoreOutcome = { ok: true } | { ok: false; file: string; why: 'missing' | 'digest' | 'path' };

/**
 * Copies the files recorded in `files` from the cache folder `source` into a candidate's build
 * folder `target`, checking each one's SHA-256 first: a file that is missing or differs stops the
 * restore (the entry is not to be trusted; the caller treats it as a miss). Only the recorded files
 * are copied, so nothing added to the cache folder afterwards reaches a candidate. With `ownerUid`
 * (the candidate's uid, when kforge runs as root) the copies are given to it, so that the candidate
 * may update its own build.
 */
export async function restoreBuild(source: string, target: string, files: BuildDigests, ownerUid: number | null): Promise<RestoreOutcome> {
  const give = async (file: string): Promise<void> => {
    if (ownerUid !== null && process.getuid?.() === 0 && ownerUid !== 0) await chown(file, ownerUid, ownerUid);
  };
  for (const [relative, digest] of Object.entries(files)) {
    if (!isContainedPath(relative)) return { ok: false, file: relative, why: 'path' };
    let contents: Buffer;
    try {
      const info = await lstat(path.join(source, relative));
      if (!info.isFile()) return { ok: false, file: relative, why: 'missing' };
      contents = await readFile(path.join(source, relative));
    } catch {
      return { ok: false, file: relative, why: 'missing' };
    }
    if (createHash('sha256').update(contents).digest('hex') !== digest) return { ok: false, file: relative, why: 'digest' };
    const parts = relative.split('/');
    for (let depth = 1; depth < parts.length; depth += 1) {
      const folder = path.join(target, ...parts.slice(0, depth));
      await mkdir(folder, { recursive: true, mode: 0o755 });
      await give(folder);
    }
    await copyWithTimes(path.join(source, relative), path.join(target, relative), contents);
    await give(path.join(target, relative));
  }
  return { ok: true };
}
