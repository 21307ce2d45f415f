import type { ProcessGroupPauser } from './process-group-pauser.js';
import { createScratchDirectory } from './scratch-directory.js';
import { stageLimitsMs } from '../run/stage-limits.js';
import type { WarmWorker } from './warm-worker-pool.js';
import { buildWorkerEnvironment } from './worker-environment.js';
import { WorkerProcess } from './worker-process.js';
import type { WorkerRole } from './worker-role.js';
import { prepareSandboxFolders, roleEnvironment, workerLaunch, type SandboxPolicy } from './worker-sandbox.js';

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
}

/**
 * Starts the workers of a {@link WarmWorkerPool} the way {@link PythonEvaluator} starts its own
 * (in the sandbox, a fresh scratch directory as cwd, HOME and TMPDIR; the allow-listed environment), plus
 * `KFORGE_WARM_DEVICE=cuda:N` on a GPU so that the worker creates that device's context first
 * (with `KFORGE_WARM_CONTEXT=0`, only its imports: see `spawn`).
 */
export class WarmWorkerSpawner {
  readonly #options: WarmWorkerSpawnerOptions;

  constructor(options: WarmWorkerSpawnerOptions) {
    this.#options = options;
  }

  /**
   * Starts a worker for `device`; with `makeContext` false a `cuda:N` worker makes no context
   * before `hello` (it makes it with its first request), so it holds no device memory while it
   * waits for its evaluation's turn.
   */
  async spawn(role: WorkerRole, device: string, makeContext = true): Promise<WarmWorker> {
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
    Object.assign(environment, roleEnvironment(role, this.#options.sandbox));
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
