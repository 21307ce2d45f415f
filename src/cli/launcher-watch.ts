/** A watch on the process that launched this one; `stop()` ends it. */
export interface LauncherWatch {
  /** Resolves once the launcher is gone (never, when there is no launcher to follow). */
  gone: Promise<void>;
  stop(): void;
}

export interface LauncherWatchOptions {
  environment: NodeJS.ProcessEnv;
  /** This process's parent pid now. Default `() => process.ppid`. */
  parentPid?: () => number;
  /** How often the parent is looked at, in ms. Default 1000. */
  intervalMs?: number;
}

/**
 * Follows the npm process that started this one (`npx kforge serve`, `npm run kforge -- serve`):
 * npm runs the command under a shell and, when npm itself is killed, the shell goes but the
 * command stays, reparented, holding its port. npm marks what it starts with `npm_command` in
 * the environment; such a process ends when its parent pid changes (its launcher is gone).
 * A command started otherwise (a shell, nohup, systemd) is never followed: `gone` never resolves.
 */
export function watchLauncher(options: LauncherWatchOptions): LauncherWatch {
  if (!options.environment.npm_command) return { gone: new Promise(() => undefined), stop: () => undefined };
  const parentPid = options.parentPid ?? (() => process.ppid);
  const launcher = parentPid();
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
