import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, open, readFile, rmdir, stat, unlink } from 'node:fs/promises';
import os from 'node:os';
import { z } from 'zod';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';

/*
 * Cross-process lock files, kept by hand: proper-lockfile (the kept library) judges staleness by
 * mtime alone, while a GPU lease must outlive a long timing without a heartbeat and be taken over
 * at once when its holder died: here the owner's pid and start time (from /proc) decide that.
 */

/** Who holds a lock file: written into it as JSON. */
export const lockOwnerSchema = z.object({
  pid: z.number().int().positive(),
  host: z.string(),
  /** Start time of the process in clock ticks since boot (`/proc/<pid>/stat` field 22), to tell a reused pid. */
  start: z.string().nullable(),
  token: z.string(),
  acquired_at: z.string(),
});
export type LockOwner = z.infer<typeof lockOwnerSchema>;

export interface FileLockOptions {
  /** Milliseconds between attempts while the lock is held by a live process. Default 100. */
  pollMs?: number;
  /** A lock taken on another host (whose process cannot be checked) is stale after this many ms. Default 1 h. */
  foreignStaleMs?: number;
  /** A lock file still empty or unreadable after this many ms is stale (its writer died). Default 10 s. */
  unreadableStaleMs?: number;
}

/** A lock file this process created; `release` removes it (once). */
export interface HeldLock {
  readonly path: string;
  release(): Promise<void>;
}

const STEAL_GUARD_STALE_MS = 30_000;

/** Start time of a process (clock ticks since boot) from /proc, or null where there is no /proc. */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return 'dead';
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function isAlive(owner: LockOwner, options: Required<FileLockOptions>): boolean {
  if (owner.host !== os.hostname()) return Date.now() - Date.parse(owner.acquired_at) < options.foreignStaleMs;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const start = processStart(owner.pid);
  if (start === 'dead') return false;
  return owner.start === null || start === null || start === owner.start;
}

async function readOwner(path: string): Promise<LockOwner | 'missing' | 'unreadable'> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unreadable';
  }
  try {
    const parsed = lockOwnerSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/**
 * This process as the owner of a file that other processes check for liveness (a lock, or an entry
 * of a memory budget), with a fresh token.
 */
export function currentLockOwner(): LockOwner {
  return {
    pid: process.pid,
    host: os.hostname(),
    start: processStart(process.pid),
    token: randomBytes(8).toString('hex'),
    acquired_at: new Date().toISOString(),
  };
}

/**
 * Creates the lock file exclusively (`O_EXCL`) with this process as owner; null when it exists.
 * A lock whose owner has died (the pid is gone, or reused by another process) is removed first.
 */
export async function tryAcquireFileLock(path: string, options: FileLockOptions = {}): Promise<HeldLock | null> {
  const resolved = resolveOptions(options);
  const owner = currentLockOwner();
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const handle = await open(path, 'wx');
      try {
        await handle.writeFile(JSON.stringify(owner));
      } finally {
        await handle.close();
      }
      return heldLock(path, owner.token);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (!(await removeIfStale(path, resolved))) return null;
  }
  return null;
}

/** Waits until the lock file can be created; an abort rejects with {@link EvaluationCancelledError}. */
export async function acquireFileLock(path: string, options: FileLockOptions = {}, signal?: AbortSignal): Promise<HeldLock> {
  const pollMs = resolveOptions(options).pollMs;
  for (;;) {
    if (signal?.aborted) throw new EvaluationCancelledError(signal.reason);
    const held = await tryAcquireFileLock(path, options);
    if (held) return held;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** Whether a lock file exists and its owner is alive. */
export async function isFileLockHeld(path: string, options: FileLockOptions = {}): Promise<boolean> {
  const owner = await readOwner(path);
  if (owner === 'missing') return false;
  if (owner === 'unreadable') return !(await olderThan(path, resolveOptions(options).unreadableStaleMs));
  return isAlive(owner, resolveOptions(options));
}

function resolveOptions(options: FileLockOptions): Required<FileLockOptions> {
  return { pollMs: options.pollMs ?? 100, foreignStaleMs: options.foreignStaleMs ?? 3_600_000, unreadableStaleMs: options.unreadableStaleMs ?? 10_000 };
}

function heldLock(path: string, token: string): HeldLock {
  let released = false;
  return {
    path,
    release: async () => {
      if (released) return;
      released = true;
      const owner = await readOwner(path);
      if (typeof owner === 'object' && owner.token === token) await unlink(path).catch(() => undefined);
    },
  };
}

async function olderThan(path: string, ageMs: number): Promise<boolean> {
  try {
    return Date.now() - (await stat(path)).mtimeMs > ageMs;
  } catch {
    return false;
  }
}

/**
 * Removes a stale lock file under a steal guard (a directory made with mkdir, atomic), so that two
 * processes that both found it stale cannot remove a fresh lock the other just took.
 */
async function removeIfStale(path: string, options: Required<FileLockOptions>): Promise<boolean> {
  const first = await readOwner(path);
  if (first === 'missing') return true;
  if (first === 'unreadable' ? !(await olderThan(path, options.unreadableStaleMs)) : isAlive(first, options)) return false;
  const guard = `${path}.steal`;
  try {
    await mkdir(guard);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (await olderThan(guard, STEAL_GUARD_STALE_MS)) await rmdir(guard).catch(() => undefined);
    return false;
  }
  try {
    const again = await readOwner(path);
    const same = again === 'unreadable' ? first === 'unreadable' : typeof again === 'object' && typeof first === 'object' && again.token === first.token;
    if (same) await unlink(path).catch(() => undefined);
    return same || again === 'missing';
  } finally {
    await rmdir(guard).catch(() => undefined);
  }
}
