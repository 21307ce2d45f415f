import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPOSITORY_ROOT } from './fixture-paths.js';

/** One `kforge worker` of a test, a real process: restarted when it dies if asked (as a supervisor would). */
export interface KforgeWorkerProcess {
  readonly name: string;
  /** The current process. */
  child: ChildProcess;
  /** What every incarnation printed on stderr. */
  stderr: string;
  /** The id the current incarnation printed when ready (null before). */
  workerId: string | null;
  /** Pids of incarnations that died without being asked to stop. */
  readonly deaths: number[];
  /** Start a new incarnation whenever one dies unasked. */
  autoRestart: boolean;
  /** Resolves once the current incarnation said it is ready. */
  ready: Promise<void>;
  /** Kills the current incarnation with SIGKILL (it is restarted if `autoRestart`). */
  kill9(): void;
  /** Sends SIGTERM (no restart) and waits for the exit. */
  stop(): Promise<void>;
}

export interface KforgeWorkerOptions {
  name: string;
  /** Arguments after `kforge worker`. */
  args: readonly string[];
  environment: NodeJS.ProcessEnv;
  cwd: string;
  /** Limit on reaching `ready`, in ms. */
  readyTimeoutMs?: number;
  /**
   * Run test-support/dying-worker-main.ts instead of the shipped CLI: a job whose candidate file
   * name contains this text kills the worker as its evaluation starts.
   */
  dieOnCandidate?: string;
}

/** Spawns `node bin/kforge.js worker ARGS` (or the dying stand-in) and follows its stderr. */
export function startKforgeWorker(options: KforgeWorkerOptions): KforgeWorkerProcess {
  let stopping = false;
  const worker: KforgeWorkerProcess = {
    name: options.name,
    child: undefined as unknown as ChildProcess,
    stderr: '',
    workerId: null,
    deaths: [],
    autoRestart: false,
    ready: Promise.resolve(),
    kill9: () => void worker.child.kill('SIGKILL'),
    stop: async () => {
      stopping = true;
      const child = worker.child;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
  const launch = (): void => {
    const entry = options.dieOnCandidate
      ? ['--import', import.meta.resolve('tsx'), path.join(REPOSITORY_ROOT, 'test-support', 'dying-worker-main.ts')]
      : [path.join(REPOSITORY_ROOT, 'bin', 'kforge.js')];
    const child = spawn(process.execPath, [...entry, 'worker', ...options.args], {
      cwd: options.cwd,
      env: options.dieOnCandidate ? { ...options.environment, KFORGE_TEST_DIE_ON_CANDIDATE: options.dieOnCandidate } : options.environment,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    worker.child = child;
    worker.workerId = null;
    worker.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${options.name} was not ready within ${options.readyTimeoutMs ?? 180_000} ms:\n${worker.stderr}`)),
        options.readyTimeoutMs ?? 180_000,
      );
      timer.unref();
      child.stderr!.on('data', (chunk: Buffer) => {
        worker.stderr += chunk.toString();
        const ready = /kforge worker: (\S+) ready:/.exec(worker.stderr.slice(worker.stderr.lastIndexOf(`[${options.name} pid ${child.pid}]`)));
        if (ready && worker.workerId === null) {
          worker.workerId = ready[1]!;
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (worker.workerId === null) reject(new Error(`${options.name} exited (${signal ?? code}) before it was ready:\n${worker.stderr}`));
      });
    });
    worker.ready.catch(() => undefined);
    worker.stderr += `[${options.name} pid ${child.pid}]\n`;
    child.once('exit', () => {
      if (stopping) return;
      worker.deaths.push(child.pid ?? 0);
      if (worker.autoRestart) launch();
    });
  };
  launch();
  return worker;
}
