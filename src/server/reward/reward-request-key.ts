import { backendModule } from '../../backends/registry.js';
import { DEFAULT_REWARD_GUARD_POLICY, effectiveGuardPolicy } from '../../core/guard-policy.js';
import type { Backend, Precision, Preset, ToleranceProfile } from '../../core/verdict.js';
import { EVALUATION_DEFAULTS } from '../../eval/run/evaluation-settings.js';
import { defaultWarmupMs } from '../../eval/timing/timing-budget.js';
import type { EvaluationRequest } from '../../eval/evaluator.js';
import { canonicalJson } from '../../core/canonical-json.js';
import { sha256Hex } from '../../store/content-hash.js';
import type { RewardRequestBody, rewardEvaluationFields } from '../api-schemas/reward-schemas.js';

/** Version of the key: bump it when what an evaluation means changes, so old rewards are not reused. */
const KEY_VERSION = 'kforge-reward-v1';

/** The evaluation options as a request gives them (its shaping is applied to the stored result, not evaluated). */
export type GivenRewardOptions = Pick<RewardRequestBody, Exclude<keyof typeof rewardEvaluationFields, 'shaping'>>;

/**
 * A request's evaluation options with every default filled in, and nothing that cannot change
 * the result: without timing, the timed-call counts are null. Two requests with equal options
 * here are the same evaluation.
 */
export interface RewardEvaluationOptions {
  backend: Backend;
  precision: Precision;
  tolerance: ToleranceProfile;
  preset: Preset;
  trials: number;
  perfTrials: number | null;
  warmupTrials: number | null;
  /** The warm-up by time, ms; null without timing. */
  warmupMs: number | null;
  guardPolicy: string;
  shapes: boolean;
  shapesGate: boolean;
  skipTiming: boolean;
}

/** Fills in the defaults of docs/spec.md sections 4–5 (as `resolveEvaluationSettings` does) and drops what cannot matter. */
export function normaliseRewardOptions(given: GivenRewardOptions): RewardEvaluationOptions {
  const skipTiming = given.skipTiming === true;
  const shapesGate = given.shapesGate === true;
  return {
    backend: given.backend,
    precision: given.precision ?? 'fp32',
    tolerance: given.tolerance ?? 'kernelbench',
    preset: given.preset ?? backendModule(given.backend).detect.kind,
    trials: given.trials ?? EVALUATION_DEFAULTS.trials,
    perfTrials: skipTiming ? null : (given.perfTrials ?? EVALUATION_DEFAULTS.perfTrials),
    warmupTrials: skipTiming ? null : (given.warmupTrials ?? EVALUATION_DEFAULTS.warmupTrials),
    warmupMs: skipTiming ? null : (given.warmupMs ?? defaultWarmupMs(given.backend)),
    guardPolicy: effectiveGuardPolicy(given.guardPolicy ?? DEFAULT_REWARD_GUARD_POLICY),
    shapes: given.shapes === true || shapesGate,
    shapesGate,
    skipTiming,
  };
}

/**
 * The cache key of a reward request: sha256 over the problem's and the candidate's sha256, the
 * backend and the normalised options. The shaping is not in it: it is applied to the stored result.
 *
 * @example rewardRequestHash({ problemSha256, candidateSha256: sha256Hex(source), options })
 */
export function rewardRequestHash(parts: { problemSha256: string; candidateSha256: string; options: RewardEvaluationOptions }): string {
  return sha256Hex(canonicalJson({ key: KEY_VERSION, problem: parts.problemSha256, candidate: parts.candidateSha256, options: parts.options }));
}

/** The {@link EvaluationRequest} for normalised options and the files the evaluator reads. */
export function evaluationRequestOf(options: RewardEvaluationOptions, files: { problemPath: string; candidatePath: string }): EvaluationRequest {
  return {
    problemPath: files.problemPath,
    candidatePath: files.candidatePath,
    backend: options.backend,
    precision: options.precision,
    tolerance: options.tolerance,
    preset: options.preset,
    trials: options.trials,
    ...(options.skipTiming
      ? { skipTiming: true }
      : {
          perfTrials: options.perfTrials ?? EVALUATION_DEFAULTS.perfTrials,
          warmupTrials: options.warmupTrials ?? EVALUATION_DEFAULTS.warmupTrials,
          warmupMs: options.warmupMs ?? defaultWarmupMs(options.backend),
        }),
    guardPolicy: options.guardPolicy,
    shapes: options.shapes,
    shapesGate: options.shapesGate,
  };
}
