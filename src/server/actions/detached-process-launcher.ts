import { spawn } from 'node:child_process';
import { mkdirSync, openSync, closeSync } from 'node:fs';
import path from 'node:path';
import { REPOSITORY_ROOT } from '../../core/repository-paths.js';
import type { LaunchedRun, RunLauncher } from './run-launcher.js';

export interface DetachedProcessLauncherOptions {
  /** Folder of the log files. Default: `logs` beside the store (`.kforge/logs` for the default store). */
  logDirectory?: string;
  /** Program and leading arguments. Default: this Node and `bin/kforge.js` of this checkout. */
  command?: readonly string[];
  cwd?: string;
  environment?: NodeJS.ProcessEnv;
  /** Clock for the log file's name. */
  now?: () => Date;
}

/**
 * Runs `node bin/kforge.js optimize --resume RUN_ID --store PATH` as a detached child in its own
 * process group, with stdout and stderr appended to `<logs>/resume-<run>-<time>.log`: it keeps
 * running when the server stops, and stops like any run (Ctrl-C in its group, or a `stop`).
 */
export class DetachedProcessLauncher implements RunLauncher {
  readonly #options: DetachedProcessLauncherOptions;

  constructor(options: DetachedProcessLauncherOptions = {}) {
    this.#options = options;
  }

  async resume(input: { runId: string; storePath: string }): Promise<LaunchedRun> {
    const logDirectory = this.#options.logDirectory ?? path.join(path.dirname(input.storePath), 'logs');
    mkdirSync(logDirectory, { recursive: true });
    const stamp = (this.#options.now ?? (() => new Date()))().toISOString().replace(/[:.]/g, '-');
    const logPath = path.join(logDirectory, `resume-${input.runId}-${stamp}.log`);
    const [program, ...leading] = this.#options.command ?? [process.execPath, path.join(REPOSITORY_ROOT, 'bin', 'kforge.js')];
    const descriptor = openSync(logPath, 'a');
    try {
      const child = spawn(program!, [...leading, 'optimize', '--resume', input.runId, '--store', input.storePath], {
        cwd: this.#options.cwd ?? process.cwd(),
        env: this.#options.environment ?? process.env,
        detached: true,
        stdio: ['ignore', descriptor, descriptor],
      });
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
      child.unref();
      return { pid: child.pid ?? null, logPath };
    } finally {
      closeSync(descriptor);
    }
  }
}
