import type {
  Backend,
  EvaluationResult,
  Precision,
  Preset,
  ToleranceProfile,
} from '../core/verdict.js';

/** Per-stage time limits in seconds. A stage that runs past its limit ends in `timeout`. */
export interface StageTimeoutsSeconds {
  startup: number;
  build: number;
  load: number;
  correctness: number;
  timing: number;
  reference: number;
  baseline: number;
  judge: number;
}

/** What to evaluate and how. Paths are absolute or relative to the caller's working directory. */
export interface EvaluationRequest {
  problemPath: string;
  candidatePath: string;
  backend: Backend;
  precision: Precision;
  tolerance: ToleranceProfile;
  /** Problem size preset; defaults to `cpu` on the cpu backend and `gpu` otherwise. */
  preset?: Preset;
  /** Correctness trials, each with a fresh seed and fresh inputs. Default 5. */
  trials?: number;
  /** Timed calls of the candidate (and of each baseline). Default 100. */
  perfTrials?: number;
  /** Untimed calls before timing starts. Default 10. */
  warmupTrials?: number;
  /** Re-time eager and torch.compile baselines even when cached. */
  refreshBaselines?: boolean;
  /** Skip timing entirely (correctness only). */
  skipTiming?: boolean;
  /** Per-stage limits; unspecified stages keep their defaults. */
  timeoutsSeconds?: Partial<StageTimeoutsSeconds>;
  /** Device index on multi-GPU hosts (`cuda:N`). Default 0. */
  deviceIndex?: number;
  /** Guard policy: a shipped policy's name (src/core/guard-policy.ts: `kernelbench`, `own-kernels`, `strict`, `permissive`, `pytorch`; the alias `default` means `own-kernels`). Default `kernelbench`. */
  guardPolicy?: string;
  /** Also check correctness at other problem sizes (`--shapes`): reported, and a gate with `shapesGate`. */
  shapes?: boolean;
  /** Reject a candidate that fails at other problem sizes (docs/hacks.md #13). Implies `shapes`. */
  shapesGate?: boolean;
  /**
   * Module constants of the problem to replace before it runs (`--set batch_size=256`): recorded in
   * the result as `problem_overrides`, so figures at other sizes are never taken for the problem's own.
   */
  overrides?: Readonly<Record<string, number | boolean>>;
  /**
   * Longest wait for room on the device (its host-wide lock and memory budget), in ms; past it the
   * evaluation fails with a `MachineFaultError` (no verdict). Default: no limit.
   */
  deviceWaitMs?: number;
  /** Time the candidate a second way in the same worker and report the ratio (`--cross-check`). */
  crossCheck?: boolean;
  /** Host time the timing stage may take, ms (default 30 000): slow candidates get fewer calls, never under 10. */
  timingBudgetMs?: number;
}

/** Progress events an evaluator reports while it works (for terminals and logs). */
export type EvaluationProgress =
  | { kind: 'stage-started'; role: 'reference' | 'candidate'; stage: string }
  | { kind: 'stage-finished'; role: 'reference' | 'candidate'; stage: string; durationMs: number };

export interface EvaluateOptions {
  signal?: AbortSignal;
  onProgress?: (event: EvaluationProgress) => void;
}

/**
 * Turns a problem and a candidate into a verdict. A candidate's failure is data (a verdict other
 * than `correct`), never an exception; implementations throw only for their own faults.
 */
export interface Evaluator {
  evaluate(request: EvaluationRequest, options?: EvaluateOptions): Promise<EvaluationResult>;
  /** Ends what it keeps between evaluations (warm workers, device locks); a command calls it as it ends. */
  close?(): Promise<void>;
}
