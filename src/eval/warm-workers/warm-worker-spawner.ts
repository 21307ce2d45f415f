import type { BudgetHolder } from '../pipeline-events.js';
import type { ProcessGroupPauser } from '../process/process-group-pauser.js';
import { createScratchDirectory } from '../process/scratch-directory.js';
import { stageLimitsMs } from '../run/stage-limits.js';
import type { WarmWorker } from './warm-worker-pool.js';
import { buildWorkerEnvironment } from '../process/worker-environment.js';
import { WorkerProcess } from '../process/worker-process.js';
import type { WorkerRole } from '../worker-role.js';
import { prepareSandboxFolders, roleEnvironment, workerLaunch, type SandboxPolicy } from '../process/worker-sandbox.js';

/** The variable that asks a worker to make a CUDA device's context before `hello` (docs/worker-protocol.md). */
export const WARM_DEVICE_VARIABLE = 'KFORGE_WARM_DEVICE';
/** `0`: the worker does the warm start's imports but makes no context (it will wait for the device). */
export const WARM_CONTEXT_VARIABLE = 'KFORGE_WARM_CONTEXT';

/** How long a discarded worker may take to exit after its stdin closed, in ms. */
const DISCARD_WINDOW_MS = 2000;

export interface WarmWorkerSpawnerOptions {
  python: string;
  workerDirectory: string;
  /** The parent environment the workers' environment is filtered from. */
  environment: NodeJS.ProcessEnv;
  scratchRoot?: string | undefined;
  keepScratch?: boolean | undefined;
  terminationGraceMs?: number | undefined;
  /** Warm-ups are background work: paused while the CPU times a candidate. */
  pauser: ProcessGroupPauser;
  /** The bytecode-cache prefix workers read (bytecode-cache.ts), asked before each spawn; null: none. */
  bytecodePrefix?: (() => Promise<string | null>) | undefined;
  /** How the workers are isolated (worker-sandbox.ts). */
  sandbox: SandboxPolicy;
  /**
   * Room for a worker's CUDA context (DeviceMemoryGate.reserveContext), released when the worker
   * has exited. `onWait` null: `no-room` at once rather than waiting. null: nothing to reserve.
   */
  reserveContext?: ((device: string, label: string, signal: AbortSignal, onWait: ContextWait | null) => Promise<ContextRoom | 'no-room' | null>) | undefined;
}

/** Told once when a context waits for room: who holds the budget, what is free, the contexts' cap. */
export type ContextWait = (holders: BudgetHolder[], freeBytes: number, capacityBytes: number, capBytes: number) => void;

/** A context's room in the device's budget. */
export interface ContextRoom {
  readonly bytes: number;
  release(): Promise<void>;
}

/**
 * Starts the workers of a {@link WarmWorkerPool} the way {@link PythonEvaluator} starts its own
 * (in the sandbox, a fresh scratch directory as cwd, HOME and TMPDIR; the allow-listed environment), plus
 * `KFORGE_WARM_DEVICE=cuda:N` on a GPU so that the worker creates that device's context first
 * (with `KFORGE_WARM_CONTEXT=0`, only its imports: see `spawn`).
 */
export class WarmWorkerSpawner {
  readonly #options: WarmWorkerSpawnerOptions;
  readonly #closing = new AbortController();

  constructor(options: WarmWorkerSpawnerOptions) {
    this.#options = options;
  }

  /**
   * Starts a worker for `device`; with `makeContext` false a `cuda:N` worker makes no context
   * before `hello` (it makes it with its first request), so it holds no device memory while it
   * waits for its evaluation's turn.
   */
  async spawn(role: WorkerRole, device: string, makeContext = true): Promise<WarmWorker> {
    // Started ahead of any evaluation: a context only where the device's budget has room for it
    // now (waiting here could hold an evaluation back behind workers that wait for the device).
    // Without one, the worker makes it with its first request; `reserveContextFor` reserves it then.
    const outcome =
      makeContext && device !== 'cpu' ? await this.#options.reserveContext?.(device, `${role} worker's context`, this.#closing.signal, null) : null;
    const context = outcome === 'no-room' ? null : (outcome ?? null);
    try {
      const warm = await this.#start(role, device, makeContext && outcome !== 'no-room');
      if (context) void warm.worker.result.finally(() => context.release());
      return { ...warm, contextBytes: context?.bytes ?? 0 };
    } catch (error) {
      await context?.release();
      throw error;
    }
  }

  /**
   * Reserves the context a worker started without one will make with its first request, waiting
   * for room (EvaluationCancelledError when `signal` ends or the spawner closes); sets its
   * `contextBytes`. Nothing to do on the cpu, for a worker that has its room, or without a budget.
   */
  async reserveContextFor(warm: WarmWorker, signal: AbortSignal | undefined, onWait: ContextWait): Promise<void> {
    if (warm.device === 'cpu' || warm.contextBytes > 0 || !this.#options.reserveContext) return;
    const waiting = signal ? AbortSignal.any([signal, this.#closing.signal]) : this.#closing.signal;
    const context = await this.#options.reserveContext(warm.device, `${warm.role} worker's context`, waiting, onWait);
    if (context === null || context === 'no-room') return;
    warm.contextBytes = context.bytes;
    void warm.worker.result.finally(() => context.release());
  }

  /** Stops the reservations still waiting for room for a context (they reject with EvaluationCancelledError). */
  close(): void {
    this.#closing.abort(new Error('the evaluator is closing'));
  }

  async #start(role: WorkerRole, device: string, makeContext: boolean): Promise<Omit<WarmWorker, 'contextBytes'>> {
    const { scratchRoot, keepScratch } = this.#options;
    const scratch = await createScratchDirectory({
      ...(scratchRoot ? { root: scratchRoot } : {}),
      keep: keepScratch === true,
      profileDirectory: this.#options.environment.KFORGE_WORKER_PROFILE,
    });
    const environment = buildWorkerEnvironment(this.#options.environment, {
      homeDirectory: scratch.homeDirectory,
      temporaryDirectory: scratch.temporaryDirectory,
      workerDirectory: this.#options.workerDirectory,
    });
    Object.assign(environment, roleEnvironment(role, this.#options.sandbox, scratch, this.#options.environment));
    environment[WARM_DEVICE_VARIABLE] = device;
    if (!makeContext && device !== 'cpu') environment[WARM_CONTEXT_VARIABLE] = '0';
    const prefix = await this.#options.bytecodePrefix?.();
    await prepareSandboxFolders(this.#options.sandbox);
    const limits = stageLimitsMs();
    const launch = workerLaunch({
      python: this.#options.python,
      workerDirectory: this.#options.workerDirectory,
      role,
      scratch,
      policy: this.#options.sandbox,
      bytecodePrefix: prefix,
    });
    const worker = WorkerProcess.start({
      role,
      command: launch.command,
      args: launch.args,
      cwd: scratch.path,
      environment,
      stageLimitsMs: limits.stages,
      idleLimitMs: limits.idleMs,
      terminationGraceMs: this.#options.terminationGraceMs,
    });
    const pid = worker.pid;
    if (pid !== undefined) {
      this.#options.pauser.add(pid);
      void worker.hello.then(() => this.#options.pauser.remove(pid));
    }
    return { role, device, worker, scratch };
  }

  /** Ends a worker that was never handed out and removes its scratch directory. */
  async discard(warm: WarmWorker): Promise<void> {
    if (warm.worker.pid !== undefined) this.#options.pauser.remove(warm.worker.pid);
    await warm.worker.finish(DISCARD_WINDOW_MS);
    await warm.scratch.remove();
  }
}
