/** A watch on the process that launched this one; `stop()` ends it. */
export interface LauncherWatch {
  /** Resolves once the launcher is gone (never, when there is no launcher to follow). */
  gone: Promise<void>;
  stop(): void;
}

/**
 * This process's parent when this module was loaded, which the CLI does before any command runs:
 * the launcher to follow. Read later (once a server listens), a launcher killed in between would
 * already have been replaced by the reaper, and the change would never be seen.
 */
const PARENT_AT_START = process.ppid;

export interface LauncherWatchOptions {
  environment: NodeJS.ProcessEnv;
  /** This process's parent pid now. Default `() => process.ppid`. */
  parentPid?: () => number;
  /** The launcher's pid. Default: this process's parent when the CLI started. */
  launcherPid?: number;
  /** How often the parent is looked at, in ms. Default 1000. */
  intervalMs?: number;
}

/**
 * Follows the npm process that started this one (`npx kforge serve`, `npm run kforge -- serve`):
 * npm runs the command under a shell and, when npm itself is killed, the shell goes but the
 * command stays, reparented, holding its port. npm marks what it starts with `npm_command` in
 * the environment; such a process ends when its parent pid changes (its launcher is gone).
 * A command started otherwise (a shell, nohup, systemd) is never followed: `gone` never resolves.
 * A launcher already gone when the watch starts is noticed at the first look.
 */
export function watchLauncher(options: LauncherWatchOptions): LauncherWatch {
  if (!options.environment.npm_command) return { gone: new Promise(() => undefined), stop: () => undefined };
  const parentPid = options.parentPid ?? (() => process.ppid);
  const launcher = options.launcherPid ?? PARENT_AT_START;
  let timer: NodeJS.Timeout | undefined;
  const gone = new Promise<void>((resolve) => {
    timer = setInterval(() => {
      if (parentPid() === launcher) return;
      clearInterval(timer);
      resolve();
    }, options.intervalMs ?? 1000);
    timer.unref();
  });
  return { gone, stop: () => clearInterval(timer) };
}
