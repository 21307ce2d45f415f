import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';
import { acquireFileLock, isFileLockHeld } from './file-lock.js';
import { MachineFaultError } from '../machine-fault-error.js';

/** One reservation of the budget, as its file holds it (the lock-owner fields of file-lock.ts, plus what it holds). */
const entrySchema = z.object({
  pid: z.number().int().positive(),
  host: z.string(),
  start: z.string().nullable(),
  token: z.string(),
  acquired_at: z.string(),
  bytes: z.number().int().nonnegative(),
  label: z.string(),
});
export type BudgetEntry = z.infer<typeof entrySchema>;

/** Who holds part of a budget, for a waiting process's message. */
export interface BudgetHolder {
  pid: number;
  label: string;
  bytes: number;
  since: string;
}

export interface MemoryBudgetOptions {
  /** The budget's folder, shared by every kforge process of the host (one per device). */
  directory: string;
  /** Bytes the device (or host, for `cpu`) offers in all. */
  capacityBytes: number;
  /** Milliseconds between attempts while there is no room. Default 200. */
  pollMs?: number;
}

export interface ReserveOptions {
  /** Says who reserves (`kforge eval problem.py candidate.py`), shown to waiting processes. */
  label: string;
  signal?: AbortSignal | undefined;
  /** Longest wait for room, ms; past it a MachineFaultError (resource `device-wait`). Default: no limit. */
  waitMs?: number | null | undefined;
  /** Called once when the reservation has to wait, with those holding the budget then. */
  onWait?: ((holders: BudgetHolder[], freeBytes: number) => void) | undefined;
}

/** A reservation held until `release` (idempotent). */
export interface BudgetReservation {
  readonly bytes: number;
  /** Bytes the evaluation may use: the capacity less what the others held when it was granted. */
  readonly grantBytes: number;
  /** Milliseconds spent waiting for room. */
  readonly waitedMs: number;
  release(): Promise<void>;
}

const GIB = 1024 ** 3;

/** Bytes as a person reads them: `6.00 GiB`, `512.0 MiB`. */
export function formatBytes(bytes: number): string {
  return bytes >= 0.1 * GIB ? `${(bytes / GIB).toFixed(2)} GiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}

function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Device memory shared by every kforge process of a host: each evaluation reserves what it is
 * estimated to need before it uses the device, and waits (polling, saying once who holds the
 * rest) while the reservations of live processes leave too little room. A reservation is a file
 * in the budget's folder written under a short mutex; one whose process has died no longer counts
 * (its file is removed by the next reservation). The folder is opened to every user of the host,
 * like the device locks'.
 *
 * @example
 * const budget = new MemoryBudget({ directory: '/tmp/kforge-device-locks/gpu0.budget', capacityBytes: 140e9 });
 * const held = await budget.reserve(38e9, { label: 'kforge eval 19_ReLU.py', waitMs: 600_000 });
 * try { … } finally { await held.release(); }
 */
export class MemoryBudget {
  readonly #options: Required<MemoryBudgetOptions>;

  constructor(options: MemoryBudgetOptions) {
    if (!(options.capacityBytes > 0)) throw new RangeError(`expected a positive capacity, got ${options.capacityBytes}`);
    this.#options = { pollMs: 200, ...options };
  }

  get capacityBytes(): number {
    return this.#options.capacityBytes;
  }

  /** Live reservations of the budget now (those of dead processes are left out and removed). */
  async holders(): Promise<BudgetHolder[]> {
    return (await this.#liveEntries()).map(({ entry }) => ({ pid: entry.pid, label: entry.label, bytes: entry.bytes, since: entry.acquired_at }));
  }

  /**
   * Reserves `bytes`, waiting for room. Throws MachineFaultError when `bytes` exceeds the whole
   * capacity (it can never fit) or the wait runs past `waitMs`; EvaluationCancelledError on abort.
   */
  async reserve(bytes: number, options: ReserveOptions): Promise<BudgetReservation> {
    const wanted = Math.max(0, Math.ceil(bytes));
    const { capacityBytes } = this.#options;
    if (wanted > capacityBytes) {
      throw new MachineFaultError(`the evaluation needs about ${formatBytes(wanted)}, more than the ${formatBytes(capacityBytes)} of the device budget`, {
        resource: 'device-wait',
        hint: 'evaluate at smaller sizes (--set NAME=VALUE), or raise the budget (KFORGE_DEVICE_MEMORY_BYTES) if the device has more',
      });
    }
    await this.#ensureDirectory();
    const askedAtMs = performance.now();
    let told = false;
    for (;;) {
      if (options.signal?.aborted) throw new EvaluationCancelledError(options.signal.reason);
      const placed = await this.#tryPlace(wanted, options.label);
      if (placed.reservation) return { ...placed.reservation, waitedMs: performance.now() - askedAtMs };
      const waitedMs = performance.now() - askedAtMs;
      if (options.waitMs != null && waitedMs >= options.waitMs) {
        const holders = placed.holders.map((holder) => `pid ${holder.pid} (${holder.label}, ${formatBytes(holder.bytes)})`).join(', ');
        throw new MachineFaultError(
          `waited ${(waitedMs / 1000).toFixed(0)} s for ${formatBytes(wanted)} of device memory; ${formatBytes(placed.freeBytes)} of ${formatBytes(capacityBytes)} stayed free, held by ${holders || 'processes that have ended'}`,
          { resource: 'device-wait', hint: 'wait longer (--wait DURATION), or stop the evaluations that hold the device', retryAfterSeconds: 60 },
        );
      }
      if (!told) {
        told = true;
        options.onWait?.(placed.holders, placed.freeBytes);
      }
      await new Promise((resolve) => setTimeout(resolve, this.#options.pollMs));
    }
  }

  async #tryPlace(bytes: number, label: string): Promise<{ reservation?: Omit<BudgetReservation, 'waitedMs'>; holders: BudgetHolder[]; freeBytes: number }> {
    const mutex = await acquireFileLock(path.join(this.#options.directory, '.mutex'), { pollMs: 20, unreadableStaleMs: 5000 });
    try {
      const live = await this.#liveEntries();
      const used = live.reduce((sum, { entry }) => sum + entry.bytes, 0);
      const freeBytes = Math.max(0, this.#options.capacityBytes - used);
      const holders = live.map(({ entry }) => ({ pid: entry.pid, label: entry.label, bytes: entry.bytes, since: entry.acquired_at }));
      if (bytes > freeBytes) return { holders, freeBytes };
      const entry: BudgetEntry = {
        pid: process.pid,
        host: os.hostname(),
        start: processStart(process.pid),
        token: randomBytes(8).toString('hex'),
        acquired_at: new Date().toISOString(),
        bytes,
        label,
      };
      const file = path.join(this.#options.directory, `${process.pid}-${entry.token}.json`);
      await writeFile(file, JSON.stringify(entry), { flag: 'wx' });
      let released: Promise<void> | undefined;
      return {
        reservation: { bytes, grantBytes: freeBytes, release: () => (released ??= unlink(file).catch(() => undefined)) },
        holders,
        freeBytes,
      };
    } finally {
      await mutex.release();
    }
  }

  async #liveEntries(): Promise<Array<{ file: string; entry: BudgetEntry }>> {
    let names: string[];
    try {
      names = await readdir(this.#options.directory);
    } catch {
      return [];
    }
    const live: Array<{ file: string; entry: BudgetEntry }> = [];
    for (const name of names.filter((candidate) => candidate.endsWith('.json'))) {
      const file = path.join(this.#options.directory, name);
      const parsed = entrySchema.safeParse(
        await readFile(file, 'utf8')
          .then((text) => JSON.parse(text) as unknown)
          .catch(() => null),
      );
      const alive = await isFileLockHeld(file);
      if (parsed.success && alive) live.push({ file, entry: parsed.data });
      else if (!alive) await unlink(file).catch(() => undefined);
    }
    return live;
  }

  async #ensureDirectory(): Promise<void> {
    const created = await mkdir(this.#options.directory, { recursive: true });
    if (created !== undefined) await chmod(this.#options.directory, 0o1777).catch(() => undefined);
  }
}
