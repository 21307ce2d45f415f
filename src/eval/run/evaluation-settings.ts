import { backendModule } from '../../backends/registry.js';
import { effectiveGuardPolicy } from '../../core/guard-policy.js';
import path from 'node:path';
import type { Backend, Precision, Preset, ToleranceProfile } from '../../core/verdict.js';
import type { EvaluationRequest } from '../evaluator.js';
import type { Stage, MessageOfType } from '../process/protocol.js';
import { stageLimitsMs } from './stage-limits.js';
import { DEFAULT_TIMING_BUDGET_MS, defaultWarmupMs } from '../timing/timing-budget.js';
import { profileTolerance, type RunTolerance } from '../../core/tolerance.js';

/** Defaults of docs/spec.md sections 4 and 5. */
export const EVALUATION_DEFAULTS = {
  trials: 5,
  perfTrials: 100,
  warmupTrials: 10,
  /** Input sets the timed calls rotate through (docs/hacks.md #8). */
  timingSeeds: 3,
  /** Timed calls whose outputs are judged (docs/hacks.md #9). */
  sampleCalls: 3,
} as const;

/** An {@link EvaluationRequest} with every default filled in and paths made absolute. */
export interface EvaluationSettings {
  problemPath: string;
  candidatePath: string;
  backend: Backend;
  precision: Precision;
  toleranceProfile: ToleranceProfile;
  /** The profile's tolerance until the reference role reports the run's own ({@link withReportedTolerance}). */
  tolerance: RunTolerance;
  preset: Preset;
  /** `cpu`, or `cuda:N` on the GPU backends. */
  device: string;
  trials: number;
  perfTrials: number;
  warmupTrials: number;
  timing: boolean;
  refreshBaselines: boolean;
  stageLimitsMs: Record<Stage, number>;
  /**
   * Stages whose limit the request set (`--timeout-<stage>`): those keep it; the others' limits are
   * sized once the reference has measured the problem's pace (sized-stage-limits.ts).
   */
  flagLimits: ReadonlySet<Stage>;
  /** Limit on waiting for a worker outside any stage (the `startup` limit), ms. */
  idleLimitMs: number;
  /** The guard policy's name, sent to both roles. */
  guardPolicy: string;
  /** Generalisation trials at other sizes, and whether they gate the verdict. */
  shapes: boolean;
  shapesGate: boolean;
  /** Replaced module constants of the problem (empty: its own sizes). */
  overrides: Readonly<Record<string, number | boolean>>;
  /** Longest wait for room on the device, ms (null: no limit). */
  deviceWaitMs: number | null;
  /** Device (or on cpu, host) memory granted to the evaluation, bytes; null: the device's whole size. */
  memoryGrantBytes: number | null;
  /** Time the candidate a second way too (`--cross-check`, docs/timing.md). */
  crossCheck: boolean;
  /** Host time the candidate's timing stage (and each baseline) may take, ms; past it fewer calls, never under 10. */
  timingBudgetMs: number;
  /** Warm-up by time of the candidate and each baseline, ms (0: the warm-up calls alone). */
  warmupMs: number;
}

/** Fills in the defaults of a request. */
export function resolveEvaluationSettings(request: EvaluationRequest, workingDirectory = process.cwd()): EvaluationSettings {
  const limits = stageLimitsMs(request.timeoutsSeconds);
  return {
    problemPath: path.resolve(workingDirectory, request.problemPath),
    candidatePath: path.resolve(workingDirectory, request.candidatePath),
    backend: request.backend,
    precision: request.precision,
    toleranceProfile: request.tolerance,
    tolerance: profileTolerance(request.tolerance, request.precision),
    preset: request.preset ?? backendModule(request.backend).detect.kind,
    device: backendModule(request.backend).detect.deviceName(request.deviceIndex),
    trials: request.trials ?? EVALUATION_DEFAULTS.trials,
    perfTrials: request.perfTrials ?? EVALUATION_DEFAULTS.perfTrials,
    warmupTrials: request.warmupTrials ?? EVALUATION_DEFAULTS.warmupTrials,
    timing: request.skipTiming !== true,
    refreshBaselines: request.refreshBaselines === true,
    stageLimitsMs: limits.stages,
    flagLimits: new Set(
      Object.entries(request.timeoutsSeconds ?? {}).flatMap(([stage, value]) => (value === undefined || stage === 'startup' ? [] : [stage as Stage])),
    ),
    idleLimitMs: limits.idleMs,
    guardPolicy: effectiveGuardPolicy(request.guardPolicy),
    shapes: request.shapes === true || request.shapesGate === true,
    shapesGate: request.shapesGate === true,
    overrides: { ...(request.overrides ?? {}) },
    deviceWaitMs: request.deviceWaitMs ?? null,
    memoryGrantBytes: null,
    crossCheck: request.crossCheck === true,
    timingBudgetMs: request.timingBudgetMs ?? DEFAULT_TIMING_BUDGET_MS,
    warmupMs: request.warmupMs ?? defaultWarmupMs(request.backend),
  };
}

/**
 * The settings with the tolerance the reference role chose from its output's dtype (`reference-ready`'s
 * `tolerance`: the problem's declaration where it wins, docs/spec.md section 4); unchanged without one.
 */
export function withReportedTolerance(settings: EvaluationSettings, ready: MessageOfType<'reference-ready'>): EvaluationSettings {
  const reported = ready.tolerance;
  if (!reported) return settings;
  return { ...settings, tolerance: { atol: reported.atol, rtol: reported.rtol, source: reported.source, dtype: reported.dtype } };
}
