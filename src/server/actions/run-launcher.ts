/** A resumed run's process, as the launcher started it. */
export interface LaunchedRun {
  /** Process id; null when the launcher does not run a local process. */
  pid: number | null;
  /** Where the process's output goes. */
  logPath: string;
}

/**
 * Starts `kforge optimize --resume` for a run, outside the server's own lifetime. The server only
 * records the `resume` action and hands the run to the launcher; tests pass a fake.
 */
export interface RunLauncher {
  resume(input: { runId: string; storePath: string }): Promise<LaunchedRun>;
}
