import { backendModule } from '../backends/registry.js';
import type { Backend, EvaluationResult, Precision, Preset, ToleranceProfile } from '../core/verdict.js';
import type { PipelineEvent } from './pipeline-events.js';

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
  /**
   * Device index on multi-GPU hosts (`cuda:N`). A local evaluator runs the evaluation on that device
   * (a PipelinedEvaluator refuses one it does not hold, with an `EvaluatorSetupError`); unset, it
   * picks one (`cuda:0` for a PythonEvaluator). Through a job queue the worker that takes the job
   * uses its own device. Ignored on the cpu backend.
   */
  deviceIndex?: number;
  /** Guard policy: a shipped policy's name (src/core/guard-policies.ts: `kernelbench`, `own-kernels`, `strict`, `permissive`, `pytorch`; the alias `default` means `own-kernels`). Default `kernelbench`. */
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
   * A problem folder's shape to evaluate alone (`--shape N`, 0-based index into shapes.py's
   * `SHAPES`); unset, every shape is (docs/problems.md). Only a {@link Evaluator} that sweeps
   * shapes (ShapeSweepEvaluator) reads it: it never reaches a worker or a job.
   */
  shape?: number;
  /**
   * Longest wait for room on the device (its host-wide lock and memory budget), in ms; past it the
   * evaluation fails with a `MachineFaultError` (no verdict). Default: no limit.
   */
  deviceWaitMs?: number;
  /** Time the candidate a second way in the same worker and report the ratio (`--cross-check`). */
  crossCheck?: boolean;
  /** Host time the timing stage may take, ms (default 30 000): slow candidates get fewer calls, never under 10. */
  timingBudgetMs?: number;
  /**
   * Warm-up by time, ms: after the `warmupTrials` calls (at least one), the candidate and each
   * baseline warm up on until this much host time has passed, within a tenth of the timing budget,
   * so that the card's clocks and power settle. Default 1000 on the GPU backends, 0 on cpu.
   */
  warmupMs?: number;
}

/** Progress events an evaluator reports while it works (for terminals and logs). */
export type EvaluationProgress =
  | { kind: 'stage-started'; role: 'reference' | 'candidate'; stage: string }
  | { kind: 'stage-finished'; role: 'reference' | 'candidate'; stage: string; durationMs: number };

export interface EvaluateOptions {
  signal?: AbortSignal;
  onProgress?: (event: EvaluationProgress) => void;
  /** What a pipelined evaluation reports besides its stages: its build, its wait for the device, its lease. */
  onPipelineEvent?: (event: PipelineEvent) => void;
  /** A problem folder's sweep starts evaluating a shape (ShapeSweepEvaluator; docs/problems.md). */
  onShape?: (event: ShapeStartedEvent) => void;
}

/** A sweep over a problem folder's shapes starts one: its index in `SHAPES`, its place in the sweep, and its label. */
export interface ShapeStartedEvent {
  index: number;
  /** 1-based position among the shapes this sweep evaluates. */
  position: number;
  /** Shapes this sweep evaluates (1 with `--shape`). */
  total: number;
  /** `shape 2 (M=32, N=8192, K=8192)`. */
  label: string;
}

/** The device an evaluation used and how long, in ms. */
export interface EvaluationUsage {
  /** The device it ran on, e.g. `cuda:0` or `cpu` (through a job queue: the one the result names, else `remote`). */
  device: string;
  /** Time it waited for the device (through a job queue: for a slot and a worker). */
  waitedMs: number;
  /** Time it held the device: its lease (0 when it never took one, as a candidate that did not build); through a job queue, the job's time on its worker. */
  heldMs: number;
}

/** One evaluation: the verdict and what it cost the device. */
export interface Evaluation {
  result: EvaluationResult;
  usage: EvaluationUsage;
}

/**
 * Turns a problem and a candidate into a verdict. A candidate's failure is data (a verdict other
 * than `correct`), never an exception; implementations throw only for their own faults.
 * Callers may ask for several evaluations at once: an implementation decides how they share
 * devices, and never times two of them on one device at once (PythonEvaluator runs one per device
 * at a time; PipelinedEvaluator builds in parallel and leases each device to one evaluation;
 * JobQueueEvaluator leaves it to the workers of its queue). An abort while waiting rejects without
 * evaluating; an abort while running cancels the evaluation.
 */
export interface Evaluator {
  evaluate(request: EvaluationRequest, options?: EvaluateOptions): Promise<Evaluation>;
  /** Ends what it keeps between evaluations (warm workers, device locks); a command calls it as it ends. */
  close?(): Promise<void>;
}

/** The device slot a request names, its backend's `deviceName`: `cpu` for the cpu backend, `cuda:N` on a GPU (`cuda:0` by default). */
export function deviceSlotOf(request: Pick<EvaluationRequest, 'backend' | 'deviceIndex'>): string {
  return backendModule(request.backend).detect.deviceName(request.deviceIndex);
}
