/** How a pipelined candidate's build stage ended, as its worker reported it. */
export interface BuildReport {
  /** The build stage ended and the worker said `built` (false: a failure, or the worker ended). */
  built: boolean;
  /** From `built`: nothing was compiled or linked; null when no extension was built or unknown. */
  cacheHit: boolean | null;
  /** The build stage's duration as the worker measured it, in ms; null when it never ended. */
  durationMs: number | null;
}

/** A device held by one evaluation alone until `release` (idempotent). */
export interface HeldDevice {
  readonly device: string;
  /** Device (on cpu, host) memory granted to this evaluation in bytes, when a budget granted it. */
  readonly grantBytes?: number;
  release(): void;
}

/**
 * What a pipelined {@link EvaluationRun} gets from its evaluator: the candidate builds first (in a
 * build-cache folder, with `await_device`), then the run waits for the device, and only then do
 * the reference and the candidate's load, correctness and timing stages run.
 */
export interface EvaluationPipeline {
  /** The candidate's `build_dir`. */
  buildDirectory: string;
  /** Called exactly once, when the build stage is over (or the candidate never got that far). */
  buildFinished(report: BuildReport): void;
  /** Resolves once the device is this evaluation's alone; it is released after both workers exited. */
  acquireDevice(): Promise<HeldDevice>;
}
