import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rmdir, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DevicePool } from './device-pool.js';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';
import { EvaluatorSetupError } from '../evaluator-setup-error.js';
import { isFileLockHeld, tryAcquireFileLock, type FileLockOptions, type HeldLock } from '../locks/file-lock.js';
import { hostGpuName } from '../../backends/nvidia/host-device-names.js';

/**
 * The folder of the host-wide device locks: `kforge-device-locks` in the system's temporary folder
 * (`os.tmpdir()`, so `TMPDIR` moves it: processes that must exclude each other share it).
 */
export function defaultDeviceLockDirectory(): string {
  return path.join(os.tmpdir(), 'kforge-device-locks');
}

/** Whether a device is locked host-wide: the GPUs (`cuda:N`); the `cpu` device is not. */
export function isHostLockedDevice(device: string): boolean {
  return /^cuda:\d+$/.test(device);
}

/**
 * The lock file of a GPU a process sees as `cuda:N`, named by the host-wide GPU
 * ({@link hostGpuName}: `CUDA_VISIBLE_DEVICES=2,3` makes `cuda:0` the file `gpu2.lock`), so that
 * two processes with different `CUDA_VISIBLE_DEVICES` lock one file for one GPU.
 *
 * @example deviceLockPath('/tmp/kforge-device-locks', 'cuda:0', '2,3') // '/tmp/kforge-device-locks/gpu2.lock'
 */
export function deviceLockPath(directory: string, device: string, visibleDevices: string | undefined): string {
  const index = Number(device.slice('cuda:'.length));
  const name = hostGpuName(index, visibleDevices).replace(/[^\w.-]/g, '_');
  return path.join(directory, `${name}.lock`);
}

export interface HostDeviceLockOptions extends FileLockOptions {
  /** The folder shared by every kforge process of the host. Default {@link defaultDeviceLockDirectory}. */
  directory?: string | undefined;
  /** `CUDA_VISIBLE_DEVICES` of the workers, to name the host-wide GPU. Default: unset. */
  visibleDevices?: string | undefined;
  /** Called once when another process holds the lock, with its pid and command line (where /proc shows them). */
  onWait?: ((holder: { pid: number | null; command: string | null }) => void) | undefined;
  /**
   * Background work (a baseline prefetch): it never takes a place in the line. It gets the lock
   * only when the lock is free and nobody waits for it, else null at once (after `onWait`), and
   * asks again later. Default false.
   */
  background?: boolean | undefined;
}

/**
 * The line of processes waiting for a GPU's lock: `<lock>.queue/`, one ticket file per waiting
 * evaluation (a lock file of its own, so a dead waiter's ticket is recognised and skipped), named
 * so that sorting the names gives the order, first come first (the time asked, in ms,
 * zero-padded). Background work takes no ticket, so every evaluation in line goes before it.
 * Without the line every waiter polled the lock file and whoever polled first after a release
 * took it: on the H200 (2026-12-05) twelve `kforge eval` processes and their baseline prefetches
 * shared one GPU that way, and one evaluation waited 1,000 s while later ones went ahead of it.
 */
function queueDirectory(lockPath: string): string {
  return `${lockPath.replace(/\.lock$/, '')}.queue`;
}

function ticketName(): string {
  return `${String(Date.now()).padStart(15, '0')}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** Whether no live ticket is ahead of `mine` (null: of anyone) in the line; dead waiters' tickets are removed. */
async function firstInLine(queue: string, mine: string | null, lockOptions: FileLockOptions): Promise<boolean> {
  const names = (await readdir(queue).catch(() => [] as string[])).filter((name) => /^\d{15}-/.test(name)).sort();
  for (const name of names) {
    if (mine !== null && name >= mine) return true;
    const ticket = path.join(queue, name);
    if (await isFileLockHeld(ticket, lockOptions)) return false;
    await unlink(ticket).catch(() => undefined);
  }
  return true;
}

/** Waits `ms`; an abort rejects with {@link EvaluationCancelledError}. */
async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, signal ? { signal } : {});
  } catch {
    throw new EvaluationCancelledError(signal?.reason);
  }
}

/** The lock now, if it is free and nobody waits in the line. */
async function tryAcquireInTurn(lockPath: string, lockOptions: FileLockOptions): Promise<HeldLock | null> {
  if (!(await firstInLine(queueDirectory(lockPath), null, lockOptions))) return null;
  return tryAcquireFileLock(lockPath, lockOptions);
}

/** Waits in the line (a ticket in {@link queueDirectory}) until it is this one's turn and the lock is free. */
async function acquireInLine(lockPath: string, lockOptions: FileLockOptions, signal: AbortSignal | undefined): Promise<HeldLock> {
  const queue = queueDirectory(lockPath);
  const name = ticketName();
  let ticket: HeldLock | null = null;
  // The last waiter to leave removes the empty folder; one removed between our mkdir and our
  // ticket is made again.
  for (let attempt = 0; !ticket; attempt += 1) {
    await ensureSharedDirectory(queue);
    try {
      ticket = await tryAcquireFileLock(path.join(queue, name), lockOptions);
      if (!ticket) throw new Error(`could not take a place in the line at ${queue}: ${name} exists`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw error;
    }
  }
  const pollMs = lockOptions.pollMs ?? 100;
  try {
    for (;;) {
      if (signal?.aborted) throw new EvaluationCancelledError(signal.reason);
      if (await firstInLine(queue, name, lockOptions)) {
        const held = await tryAcquireFileLock(lockPath, lockOptions);
        if (held) return held;
      }
      await pause(pollMs, signal);
    }
  } finally {
    await ticket.release();
    await rmdir(queue).catch(() => undefined);
  }
}

/** The pid and command line of a lock file's owner, as far as they can be read. */
async function lockHolder(lockPath: string): Promise<{ pid: number | null; command: string | null }> {
  try {
    const owner = JSON.parse(await readFile(lockPath, 'utf8')) as { pid?: unknown };
    const pid = typeof owner.pid === 'number' ? owner.pid : null;
    const command = pid === null ? null : (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').filter(Boolean).join(' ') || null;
    return { pid, command };
  } catch {
    return { pid: null, command: null };
  }
}

/**
 * Holds a GPU for this process alone among every kforge process of the host: waits until its lock
 * file ({@link deviceLockPath}) can be created, polling while a live process holds it; a lock left
 * by a dead process is taken over (see `locks/file-lock.ts`). Null for a device that is not locked
 * host-wide (`cpu`). An abort rejects with `EvaluationCancelledError`; a folder that cannot hold
 * the lock (not writable) with `EvaluatorSetupError`.
 */
export async function acquireHostDeviceLock(device: string, options: HostDeviceLockOptions = {}, signal?: AbortSignal): Promise<HeldLock | null> {
  if (!isHostLockedDevice(device)) return null;
  const directory = options.directory ?? defaultDeviceLockDirectory();
  const { directory: _directory, visibleDevices, onWait, background = false, ...lockOptions } = options;
  const lockPath = deviceLockPath(directory, device, visibleDevices);
  try {
    await ensureSharedDirectory(directory);
    const first = await tryAcquireInTurn(lockPath, lockOptions);
    if (first) return first;
    onWait?.(await lockHolder(lockPath));
    return background ? null : await acquireInLine(lockPath, lockOptions, signal);
  } catch (error) {
    if (error instanceof EvaluationCancelledError) throw error;
    throw new EvaluatorSetupError(`cannot lock ${device} for this host at ${lockPath}: ${(error as Error).message}`, {
      hint: `make ${directory} writable by every user of kforge (chmod 1777), or point TMPDIR elsewhere for every kforge process of the host`,
      cause: error,
    });
  }
}

/**
 * Makes the lock folder; one this process created is opened to every user of the host (sticky,
 * like `/tmp`), so a second user's kforge can lock the same GPUs.
 */
async function ensureSharedDirectory(directory: string): Promise<void> {
  const created = await mkdir(directory, { recursive: true });
  if (created !== undefined) await chmod(directory, 0o1777).catch(() => undefined);
}

/** A device held in this process ({@link DevicePool}) and, on a GPU, host-wide. */
export interface HostWideDeviceLease {
  readonly device: string;
  /** Milliseconds spent waiting: for the in-process lease, then for the lock file. */
  readonly waitedMs: number;
  /** The lock file held, or null (`cpu`). */
  readonly lockPath: string | null;
  /** Removes the lock file, then frees the in-process lease for this process's next evaluation (idempotent). */
  release(): Promise<void>;
}

/**
 * Takes `device` from the in-process pool, then its host-wide lock ({@link acquireHostDeviceLock}),
 * so that neither another evaluation of this process nor another kforge process of the host holds
 * it at the same time. A failed or cancelled wait for the lock frees the in-process lease. The wait
 * in the pool ends only with `signal`; the wait for the lock with `lockSignal(signal)`.
 *
 * Background work (`priority` below 0, a baseline prefetch) never waits for the lock while holding
 * the in-process lease: it takes the lock only when it is free and no evaluation of the host waits
 * for it, and otherwise gives the in-process lease back and asks again after `pollMs`. On the H200
 * (2026-12-05) a prefetch that held the lease while another process timed kept its own
 * evaluation waiting behind it for 800 s, and that evaluation said nothing (its wait was in this
 * process's pool, not for the lock).
 */
export async function leaseDeviceHostWide(
  pool: DevicePool,
  device: string,
  options: HostDeviceLockOptions = {},
  signal?: AbortSignal,
  priority = 0,
  /**
   * The signal of the wait for the lock, asked for once the in-process lease is held (default
   * `signal`): `--wait` bounds what other processes hold, not this process's own queue.
   */
  lockSignal: (signal: AbortSignal | undefined) => AbortSignal | undefined = (given) => given,
): Promise<HostWideDeviceLease> {
  const askedAtMs = performance.now();
  let lease = await pool.acquire(device, signal, priority);
  let lock: HeldLock | null;
  try {
    if (priority < 0 && isHostLockedDevice(device)) {
      // Said once: the first refusal calls onWait, the later ones do not.
      for (let asked = 0; ; asked += 1) {
        const waiting = lockSignal(signal);
        lock = await acquireHostDeviceLock(device, { ...options, background: true, onWait: asked === 0 ? options.onWait : undefined }, waiting);
        if (lock) break;
        lease.release();
        await pause(options.pollMs ?? 100, waiting);
        lease = await pool.acquire(device, signal, priority);
      }
    } else {
      lock = await acquireHostDeviceLock(device, options, lockSignal(signal));
    }
  } catch (error) {
    lease.release();
    throw error;
  }
  let released: Promise<void> | undefined;
  return {
    device,
    waitedMs: performance.now() - askedAtMs,
    lockPath: lock?.path ?? null,
    release: () => {
      released ??= (lock?.release() ?? Promise.resolve()).finally(() => lease.release());
      return released;
    },
  };
}
