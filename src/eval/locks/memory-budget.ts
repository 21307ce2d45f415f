import { chmod, mkdir, readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';
import { acquireFileLock, currentLockOwner, isFileLockHeld, lockOwnerSchema } from './file-lock.js';
import { MachineFaultError } from '../machine-fault-error.js';
import type { BudgetHolder } from '../pipeline-events.js';
import { describeHolders } from './describe-holders.js';
import { formatBytes } from '../../core/number-format.js';

/** One reservation of the budget, as its file holds it (the lock-owner fields of file-lock.ts, plus what it holds). */
const entrySchema = lockOwnerSchema.extend({
  bytes: z.number().int().nonnegative(),
  label: z.string(),
  /**
   * `context`: a worker's CUDA context, held outside any lease (`reserveContext`); absent in older
   * files. `wanted`: holds nothing; a context reservation that waits for room says so, so that idle
   * workers give theirs back (`wantedContexts`) and no worker started ahead takes the room first.
   */
  kind: z.enum(['evaluation', 'context', 'wanted']).default('evaluation'),
});
export type BudgetEntry = z.infer<typeof entrySchema>;
type HeldKind = BudgetHolder['kind'];

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
  /**
   * Bytes of `bytes` this evaluation holds already, in its workers' context reservations: not
   * reserved twice, and part of its grant.
   */
  heldBytes?: number | undefined;
}

export interface ReserveContextOptions {
  label: string;
  signal?: AbortSignal | undefined;
  /** The most bytes all contexts of the device may hold at once. */
  capBytes: number;
  /**
   * False: no wait; null at once when there is no room, or when another reservation waits for a
   * context (a worker started ahead must not take the room a waiting evaluation is owed). Default true.
   */
  wait?: boolean | undefined;
  onWait?: ((holders: BudgetHolder[], freeBytes: number) => void) | undefined;
}

/** What the budget holds now, as a reservation's rule sees it: free bytes, and bytes held by each kind. */
interface BudgetUsage {
  free: number;
  contexts: number;
  evaluations: number;
  /** Context reservations waiting for room. */
  wanted: number;
}

/** A reservation's rule: the grant it would get with the budget as it is, or null (no room). */
type GrantRule = (usage: BudgetUsage) => number | null;

/** The entry a reservation writes, and who is told when it waits. */
interface Placing {
  bytes: number;
  kind: HeldKind;
  label: string;
  signal?: AbortSignal | undefined;
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

function holderOf(entry: BudgetEntry & { kind: HeldKind }): BudgetHolder {
  return { pid: entry.pid, label: entry.label, bytes: entry.bytes, since: entry.acquired_at, kind: entry.kind };
}

function holds(entry: BudgetEntry): entry is BudgetEntry & { kind: HeldKind } {
  return entry.kind !== 'wanted';
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
    return (await this.#liveEntries()).flatMap(({ entry }) => (holds(entry) ? [holderOf(entry)] : []));
  }

  /**
   * Context reservations of live processes waiting for room now. A process whose idle workers hold
   * contexts ends them while this is above zero (WarmWorkerPool), so that a context is never kept
   * idle while an evaluation waits for one.
   */
  async wantedContexts(): Promise<number> {
    return (await this.#liveEntries()).filter(({ entry }) => entry.kind === 'wanted').length;
  }

  /**
   * Reserves `bytes` for an evaluation, waiting for room. Throws MachineFaultError when `bytes`
   * exceeds the whole capacity (it can never fit) or the wait runs past `waitMs`;
   * EvaluationCancelledError on abort.
   *
   * Contexts held outside any lease (workers of processes waiting for the device) count against
   * the room, but an evaluation never waits on them alone: when `bytes` cannot fit beside them
   * even with no other evaluation on the device, it is placed once the other evaluations' room
   * allows, and its grant leaves those contexts out (running out of memory there is the machine's).
   * Contexts are capped (`reserveContext`), so this happens only for the largest problems.
   */
  async reserve(bytes: number, options: ReserveOptions): Promise<BudgetReservation> {
    const wanted = Math.max(0, Math.ceil(bytes));
    const held = Math.min(wanted, Math.max(0, options.heldBytes ?? 0));
    const { capacityBytes } = this.#options;
    if (wanted > capacityBytes) {
      throw new MachineFaultError(`the evaluation needs about ${formatBytes(wanted)}, more than the ${formatBytes(capacityBytes)} of the device budget`, {
        resource: 'device-wait',
        hint: 'evaluate at smaller sizes (--set NAME=VALUE), or raise the budget (KFORGE_DEVICE_MEMORY_BYTES) if the device has more',
      });
    }
    return this.#waitFor(
      (usage) => {
        const othersContexts = usage.contexts - held;
        if (wanted + othersContexts <= capacityBytes) return wanted - held <= usage.free ? usage.free + held : null;
        const room = capacityBytes - usage.evaluations;
        return wanted <= room ? room : null;
      },
      { bytes: wanted - held, kind: 'evaluation', label: options.label, signal: options.signal, onWait: options.onWait },
      (waitedMs, holders, freeBytes) => {
        if (options.waitMs == null || waitedMs < options.waitMs) return null;
        const named = describeHolders(holders);
        return new MachineFaultError(
          `waited ${(waitedMs / 1000).toFixed(0)} s for ${formatBytes(wanted)} of device memory; ${formatBytes(freeBytes)} of ${formatBytes(capacityBytes)} stayed free, held by ${named || 'processes that have ended'}`,
          { resource: 'device-wait', hint: 'wait longer (--wait DURATION), or stop the evaluations that hold the device', retryAfterSeconds: 60 },
        );
      },
    );
  }

  /**
   * Reserves `bytes` for a worker's CUDA context, made before its evaluation holds the device and
   * kept while it waits: waits while the device's contexts would pass `capBytes` or the budget
   * has no room (with `wait: false`, null at once instead). Released when the worker ends.
   * EvaluationCancelledError on abort.
   */
  async reserveContext(bytes: number, options: ReserveContextOptions & { wait: false }): Promise<BudgetReservation | null>;
  async reserveContext(bytes: number, options: ReserveContextOptions): Promise<BudgetReservation>;
  async reserveContext(bytes: number, options: ReserveContextOptions): Promise<BudgetReservation | null> {
    const wanted = Math.max(0, Math.ceil(bytes));
    const cap = Math.max(wanted, options.capBytes);
    const grantOf: GrantRule = (usage) => (usage.contexts + wanted <= cap && wanted <= usage.free ? usage.free : null);
    const placing: Placing = { bytes: wanted, kind: 'context', label: options.label, signal: options.signal, onWait: options.onWait };
    if (options.wait !== false) return this.#waitFor(grantOf, placing, () => null);
    if (options.signal?.aborted) throw new EvaluationCancelledError(options.signal.reason);
    await this.#ensureDirectory();
    const { reservation } = await this.#tryPlace((usage) => (usage.wanted === 0 ? grantOf(usage) : null), placing);
    return reservation ? { ...reservation, waitedMs: 0 } : null;
  }

  async #waitFor(
    grantOf: GrantRule,
    placing: Placing,
    giveUp: (waitedMs: number, holders: BudgetHolder[], freeBytes: number) => Error | null,
  ): Promise<BudgetReservation> {
    await this.#ensureDirectory();
    const askedAtMs = performance.now();
    let told = false;
    // A context that waits says so in the folder until it is placed or given up (see `wantedContexts`).
    let wantedFile: string | null = null;
    try {
      for (;;) {
        if (placing.signal?.aborted) throw new EvaluationCancelledError(placing.signal.reason);
        const placed = await this.#tryPlace(grantOf, placing);
        if (placed.reservation) return { ...placed.reservation, waitedMs: performance.now() - askedAtMs };
        const failure = giveUp(performance.now() - askedAtMs, placed.holders, placed.freeBytes);
        if (failure) throw failure;
        if (placing.kind === 'context' && wantedFile === null) wantedFile = await this.#write({ bytes: 0, kind: 'wanted', label: placing.label });
        if (!told) {
          told = true;
          placing.onWait?.(placed.holders, placed.freeBytes);
        }
        await new Promise((resolve) => setTimeout(resolve, this.#options.pollMs));
      }
    } finally {
      if (wantedFile !== null) await unlink(wantedFile).catch(() => undefined);
    }
  }

  async #tryPlace(
    grantOf: GrantRule,
    placing: Placing,
  ): Promise<{ reservation?: Omit<BudgetReservation, 'waitedMs'>; holders: BudgetHolder[]; freeBytes: number }> {
    const mutex = await acquireFileLock(path.join(this.#options.directory, '.mutex'), { pollMs: 20, unreadableStaleMs: 5000 });
    try {
      const live = await this.#liveEntries();
      const sum = (kind: HeldKind): number => live.reduce((total, { entry }) => total + (entry.kind === kind ? entry.bytes : 0), 0);
      const contexts = sum('context');
      const evaluations = sum('evaluation');
      const wanted = live.filter(({ entry }) => entry.kind === 'wanted').length;
      const freeBytes = Math.max(0, this.#options.capacityBytes - contexts - evaluations);
      const holders = live.flatMap(({ entry }) => (holds(entry) ? [holderOf(entry)] : []));
      const grantBytes = grantOf({ free: freeBytes, contexts, evaluations, wanted });
      if (grantBytes === null) return { holders, freeBytes };
      const file = await this.#write(placing);
      let released: Promise<void> | undefined;
      return {
        reservation: { bytes: placing.bytes, grantBytes, release: () => (released ??= unlink(file).catch(() => undefined)) },
        holders,
        freeBytes,
      };
    } finally {
      await mutex.release();
    }
  }

  /** Writes an entry of this process into the folder; its file's path. */
  async #write(placing: Pick<BudgetEntry, 'bytes' | 'kind' | 'label'>): Promise<string> {
    const entry: BudgetEntry = { ...currentLockOwner(), bytes: placing.bytes, label: placing.label, kind: placing.kind };
    const file = path.join(this.#options.directory, `${process.pid}-${entry.token}.json`);
    await writeFile(file, JSON.stringify(entry), { flag: 'wx' });
    return file;
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
