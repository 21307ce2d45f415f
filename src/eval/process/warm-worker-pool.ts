import pino, { type Logger } from 'pino';
import type { ScratchDirectory } from './scratch-directory.js';
import type { WorkerProcess } from './worker-process.js';
import type { WorkerRole } from './worker-role.js';

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
  logger?: Logger;
}

/** Counts of what the pool did. */
export interface WarmWorkerPoolStats {
  spawned: number;
  handedOut: number;
  discarded: number;
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

  constructor(options: WarmWorkerPoolOptions) {
    this.#options = options;
    this.#logger = options.logger ?? pino({ level: 'silent' });
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
    return { spawned: this.#spawned, handedOut: this.#handedOut, discarded: this.#discarded, idle };
  }

  /** Ends every worker not handed out; later `take`s throw {@link WarmWorkerPoolClosedError}. */
  async close(): Promise<void> {
    this.#closed = true;
    const pending = [...this.#idle.values()].flat();
    this.#idle.clear();
    await Promise.all(pending.map((started) => started.then((warm) => this.#discard(warm)).catch(() => undefined)));
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
