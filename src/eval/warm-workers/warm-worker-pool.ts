import pino, { type Logger } from 'pino';
import type { ScratchDirectory } from '../process/scratch-directory.js';
import type { WorkerProcess } from '../process/worker-process.js';
import type { WorkerRole } from '../worker-role.js';

/** A worker started ahead of its evaluation, in its own scratch directory. */
export interface WarmWorker {
  role: WorkerRole;
  /** `cpu` or `cuda:N`: on cuda the worker made this device's context current, unless started without one (a reference worker taken on demand). */
  device: string;
  worker: WorkerProcess;
  scratch: ScratchDirectory;
  /** Device memory reserved for its context in the device's budget until it exits (0: none). */
  contextBytes: number;
}

export interface WarmWorkerPoolOptions {
  /** Starts one worker; it is ready once it said hello. `makeContext`: whether a `cuda:N` worker makes its context before hello. */
  spawn: (role: WorkerRole, device: string, makeContext: boolean) => Promise<WarmWorker>;
  /** Workers kept started and not handed out, per role and device. */
  idleTarget: (role: WorkerRole, device: string) => number;
  /** Ends a worker that is not handed out (pool closed, or it died while idle). */
  discard: (warm: WarmWorker) => Promise<void>;
  /**
   * Context reservations waiting for room on a device now, in any process of the host
   * (DeviceMemoryGate.wantedContexts). While it is above zero, idle workers that hold a context on
   * that device are ended, as many as wait, and replaced by workers started without one.
   */
  wantedContexts?: ((device: string) => Promise<number>) | undefined;
  /** How often the pool asks `wantedContexts` while it has idle workers holding a context, ms. Default 1000. */
  pressurePollMs?: number | undefined;
  logger?: Logger;
}

/** Counts of what the pool did. */
export interface WarmWorkerPoolStats {
  spawned: number;
  handedOut: number;
  discarded: number;
  /** Idle workers ended because an evaluation waited for room for a context. */
  contextsGivenBack: number;
  /** Started and not handed out now (some may still be importing torch). */
  idle: number;
}

/** The pool was closed: no more workers are handed out. */
export class WarmWorkerPoolClosedError extends Error {
  override readonly name = 'WarmWorkerPoolClosedError';

  constructor() {
    super('the warm worker pool is closed');
  }
}

/**
 * How long a context given back is taken to be on its way to a waiter after its worker ended (the
 * waiter places itself within its budget's poll, 200 ms by default).
 */
const CONTEXT_SETTLE_MS = 2000;

/** Attempts to find a live idle worker before a dead one is handed out as it is. */
const MAX_TAKE_ATTEMPTS = 4;

/**
 * Worker processes started ahead (Python and PyTorch imported, on cuda the device's context made),
 * so an evaluation does not wait for them. Each worker is handed out once, to one evaluation, and
 * never comes back: isolation is the same as a fresh process per evaluation. Every `take` starts a
 * replacement, keeping `idleTarget` workers per role and device started.
 *
 * @example
 * const warm = await pool.take('candidate', 'cuda:0');
 * warm.worker.adopt({ stageLimitsMs, idleLimitMs });
 */
export class WarmWorkerPool {
  readonly #options: WarmWorkerPoolOptions;
  readonly #logger: Logger;
  readonly #idle = new Map<string, Array<Promise<WarmWorker>>>();
  /** Idle workers that have started, by their promise in a queue. */
  readonly #started = new WeakMap<Promise<WarmWorker>, WarmWorker>();
  #closed = false;
  #spawned = 0;
  #handedOut = 0;
  #discarded = 0;
  #contextsGivenBack = 0;
  /** Per device, the contexts given back lately: when each worker ended (null: still ending). */
  readonly #givenBack = new Map<string, Array<number | null>>();
  #pressureTimer: NodeJS.Timeout | undefined;

  constructor(options: WarmWorkerPoolOptions) {
    this.#options = options;
    this.#logger = options.logger ?? pino({ level: 'silent' });
    if (options.wantedContexts) this.#watchPressure(options.wantedContexts);
  }

  /** Starts workers of a role and device up to the idle target, without taking one. */
  prewarm(role: WorkerRole, device: string): void {
    if (this.#closed) return;
    const queue = this.#queue(role, device);
    const target = Math.max(0, this.#options.idleTarget(role, device));
    while (queue.length < target) queue.push(this.#spawn(role, device, true));
  }

  /**
   * The oldest started worker of a role and device (waiting for one to start when none is), handed
   * out once. One that died after its hello while idle is discarded and another taken; one that
   * died before hello is handed out, so its evaluation reports why (an EvaluatorSetupError).
   */
  async take(role: WorkerRole, device: string): Promise<WarmWorker> {
    for (let attempt = 1; ; attempt += 1) {
      if (this.#closed) throw new WarmWorkerPoolClosedError();
      const queue = this.#queue(role, device);
      // Started for a caller that may wait for the device with it (a baseline prefetch waits
      // behind every evaluation of the host): a reference worker makes its context only with its
      // request, so that it holds no device memory meanwhile. A candidate worker needs the device
      // in its build (the guard's snapshot before the candidate's module runs), so it makes it now.
      if (queue.length === 0) queue.push(this.#spawn(role, device, role !== 'reference'));
      const next = queue.shift()!;
      this.prewarm(role, device);
      let warm = await next;
      // One started without a context (the device's contexts were at their cap) would wait for
      // room before its build: an idle one that holds a context goes first, so that this process's
      // own idle workers never hold the room its evaluation waits for.
      const withContext =
        warm.device !== 'cpu' && warm.contextBytes === 0 ? queue.findIndex((started) => (this.#started.get(started)?.contextBytes ?? 0) > 0) : -1;
      if (withContext >= 0) {
        const [swapped] = queue.splice(withContext, 1, next);
        warm = this.#started.get(swapped!)!;
      }
      if (this.#closed) {
        await this.#discard(warm);
        throw new WarmWorkerPoolClosedError();
      }
      const diedIdle = warm.worker.exited && (await warm.worker.hello) !== null;
      if (diedIdle && attempt < MAX_TAKE_ATTEMPTS) {
        this.#logger.warn({ role, device, pid: warm.worker.pid }, 'a warm worker died while idle; taking another');
        await this.#discard(warm);
        continue;
      }
      this.#handedOut += 1;
      return warm;
    }
  }

  stats(): WarmWorkerPoolStats {
    const idle = [...this.#idle.values()].reduce((sum, queue) => sum + queue.length, 0);
    return { spawned: this.#spawned, handedOut: this.#handedOut, discarded: this.#discarded, contextsGivenBack: this.#contextsGivenBack, idle };
  }

  /** Ends every worker not handed out; later `take`s throw {@link WarmWorkerPoolClosedError}. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#pressureTimer);
    const pending = [...this.#idle.values()].flat();
    this.#idle.clear();
    await Promise.all(pending.map((started) => started.then((warm) => this.#discard(warm)).catch(() => undefined)));
  }

  /**
   * Every `pressurePollMs`, while some idle worker holds a context: on each such device, ends as
   * many of them as there are context reservations waiting there (any process's, this one's too),
   * and starts their replacements, which find the room owed to the waiters and start without one.
   * Without this, a process whose pool sat idle (`kforge serve`, `kforge worker`) would keep its
   * contexts while the evaluations of others waited for the cap.
   */
  #watchPressure(wantedContexts: (device: string) => Promise<number>): void {
    const look = async (): Promise<void> => {
      const holding = new Set<string>();
      for (const queue of this.#idle.values())
        for (const started of queue) {
          const warm = this.#started.get(started);
          if (warm && warm.contextBytes > 0) holding.add(warm.device);
        }
      for (const device of holding) {
        const wanted = await wantedContexts(device).catch((error: unknown) => {
          this.#logger.warn({ err: error, device }, 'could not read the device budget for waiting contexts');
          return 0;
        });
        if (wanted > 0 && !this.#closed) await this.#giveBackContexts(device, wanted);
      }
    };
    const schedule = (): void => {
      if (this.#closed) return;
      this.#pressureTimer = setTimeout(() => void look().finally(schedule), this.#options.pressurePollMs ?? 1000);
      this.#pressureTimer.unref();
    };
    schedule();
  }

  async #giveBackContexts(device: string, wanted: number): Promise<void> {
    // A context given back reaches its waiter only once the worker has exited and the waiter's next
    // poll has placed it; until then (CONTEXT_SETTLE_MS after the worker ended) the waiter still
    // counts as waiting, and is owed nothing more.
    const nowMs = performance.now();
    const owed = (this.#givenBack.get(device) ?? []).filter((endedAtMs) => endedAtMs === null || nowMs - endedAtMs < CONTEXT_SETTLE_MS);
    const count = wanted - owed.length;
    const ended: WarmWorker[] = [];
    for (const queue of this.#idle.values()) {
      for (let index = queue.length - 1; index >= 0 && ended.length < count; index -= 1) {
        const warm = this.#started.get(queue[index]!);
        if (!warm || warm.device !== device || warm.contextBytes === 0) continue;
        queue.splice(index, 1);
        ended.push(warm);
      }
    }
    this.#contextsGivenBack += ended.length;
    const marks: Array<number | null> = [...owed, ...ended.map(() => null)];
    this.#givenBack.set(device, marks);
    for (const warm of ended) {
      this.#logger.info({ role: warm.role, device, pid: warm.worker.pid }, 'ended an idle worker: an evaluation waits for room for its CUDA context');
      this.prewarm(warm.role, device);
    }
    await Promise.all(
      ended.map(async (warm, index) => {
        await this.#discard(warm);
        marks[owed.length + index] = performance.now();
      }),
    );
  }

  #queue(role: WorkerRole, device: string): Array<Promise<WarmWorker>> {
    const key = `${role}@${device}`;
    let queue = this.#idle.get(key);
    if (!queue) {
      queue = [];
      this.#idle.set(key, queue);
    }
    return queue;
  }

  #spawn(role: WorkerRole, device: string, makeContext: boolean): Promise<WarmWorker> {
    this.#spawned += 1;
    const started = this.#options.spawn(role, device, makeContext);
    // A spawn that fails while nobody waits for it must not be an unhandled rejection.
    started.then(
      (warm) => this.#started.set(started, warm),
      (error: unknown) => this.#logger.warn({ err: error, role, device }, 'could not start a warm worker'),
    );
    return started;
  }

  async #discard(warm: WarmWorker): Promise<void> {
    this.#discarded += 1;
    await this.#options.discard(warm);
  }
}
