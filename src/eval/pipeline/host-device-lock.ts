import { chmod, mkdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DevicePool } from './device-pool.js';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';
import { EvaluatorSetupError } from '../evaluator-setup-error.js';
import { acquireFileLock, tryAcquireFileLock, type FileLockOptions, type HeldLock } from './file-lock.js';
import { hostGpuName } from './host-device-names.js';

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
 * by a dead process is taken over (see `file-lock.ts`). Null for a device that is not locked
 * host-wide (`cpu`). An abort rejects with `EvaluationCancelledError`; a folder that cannot hold
 * the lock (not writable) with `EvaluatorSetupError`.
 */
export async function acquireHostDeviceLock(device: string, options: HostDeviceLockOptions = {}, signal?: AbortSignal): Promise<HeldLock | null> {
  if (!isHostLockedDevice(device)) return null;
  const directory = options.directory ?? defaultDeviceLockDirectory();
  const { directory: _directory, visibleDevices, onWait, ...lockOptions } = options;
  const lockPath = deviceLockPath(directory, device, visibleDevices);
  try {
    await ensureSharedDirectory(directory);
    const first = await tryAcquireFileLock(lockPath, lockOptions);
    if (first) return first;
    onWait?.(await lockHolder(lockPath));
    return await acquireFileLock(lockPath, lockOptions, signal);
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
 * it at the same time. A failed or cancelled wait for the lock frees the in-process lease.
 */
export async function leaseDeviceHostWide(
  pool: DevicePool,
  device: string,
  options: HostDeviceLockOptions = {},
  signal?: AbortSignal,
  priority = 0,
): Promise<HostWideDeviceLease> {
  const askedAtMs = performance.now();
  const lease = await pool.acquire(device, signal, priority);
  let lock: HeldLock | null;
  try {
    lock = await acquireHostDeviceLock(device, options, signal);
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
