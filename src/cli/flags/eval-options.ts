import { DEFAULT_GUARD_POLICY } from '../../core/guard-policy.js';
import { z } from 'zod';
import { BACKENDS, PRECISIONS, PRESETS, TOLERANCE_PROFILES } from '../../core/verdict.js';
import type { Backend } from '../../core/verdict.js';
import type { EvaluationRequest, StageTimeoutsSeconds } from '../../eval/evaluator.js';
import { choiceFlag, guardPolicyFlag, integerFlag, nonNegativeNumberFlag, positiveNumberFlag } from './flag-schemas.js';
import { parseDuration } from './size-flags.js';
import { LOG_FORMATS } from '../io/log-formats.js';
import { TIMEOUT_STAGES, timeoutOptionName } from './timeout-stages.js';
import { UsageError } from '../io/usage-error.js';

export { TIMEOUT_STAGES, timeoutOptionName } from './timeout-stages.js';

const seconds = (flag: string) => positiveNumberFlag(flag, 'seconds');
const timeoutShape = Object.fromEntries(TIMEOUT_STAGES.map((stage) => [timeoutOptionName(stage), seconds(`--timeout-${stage}`).optional()])) as Record<
  string,
  z.ZodOptional<ReturnType<typeof seconds>>
>;

/** Validates the raw flags of `kforge eval` (as commander collected them). */
export const evalOptionsSchema = z.object({
  backend: choiceFlag('--backend', BACKENDS).optional(),
  precision: choiceFlag('--precision', PRECISIONS).default('fp32'),
  tolerance: choiceFlag('--tolerance', TOLERANCE_PROFILES).default('kernelbench'),
  preset: choiceFlag('--preset', PRESETS).optional(),
  trials: integerFlag('--trials', 1).optional(),
  perfTrials: integerFlag('--perf-trials', 1).optional(),
  warmup: integerFlag('--warmup', 0).optional(),
  device: integerFlag('--device', 0).optional(),
  refreshBaselines: z.boolean().default(false),
  timing: z.boolean().default(true),
  guardPolicy: guardPolicyFlag('--guard-policy').default(DEFAULT_GUARD_POLICY),
  shapes: z.boolean().default(false),
  shapesGate: z.boolean().default(false),
  crossCheck: z.boolean().default(false),
  timingBudget: seconds('--timing-budget').optional(),
  warmupMs: nonNegativeNumberFlag('--warmup-ms', 'milliseconds').optional(),
  json: z.boolean().default(false),
  cacheDir: z.string().min(1, 'expected `--cache-dir` to name a folder, got an empty string').optional(),
  /** `--set NAME=VALUE`, repeatable: module constants of the problem replaced (size-flags.ts). */
  set: z.array(z.string()).default([]),
  /** `--wait DURATION`: longest wait for room on the device (size-flags.ts). */
  wait: z.string().optional(),
  /** `--fit`: at sizes that fit this machine when the problem's own do not. */
  fit: z.boolean().default(false),
  /** `--shape N`: one shape of a problem folder (0-based; docs/problems.md). */
  shape: integerFlag('--shape', 0).optional(),
  /** `--eval-budget DURATION`: at sizes whose evaluation takes about that long on this machine (problem-sizing.ts). */
  evalBudget: z.string().optional(),
  /** `--kernelbench PATH`: where a KernelBench run folder's problems are. */
  kernelbench: z.string().min(1).optional(),
  /** Further attempts of a batch candidate after a machine fault. */
  retries: integerFlag('--retries', 0).optional(),
  /** `--resume FILE`: a batch's results kept as they finish; those it holds are not evaluated again (eval-batch-resume.ts). */
  resume: z.string().min(1, 'expected `--resume` to name a file').optional(),
  logFormat: choiceFlag('--log-format', LOG_FORMATS).optional(),
  ...timeoutShape,
});
export type EvalOptions = z.infer<typeof evalOptionsSchema>;

/** Parses the flags or throws a {@link UsageError} naming the first bad one. */
export function parseEvalOptions(raw: unknown): EvalOptions {
  const parsed = evalOptionsSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(parsed.error.issues[0]?.message ?? 'invalid options');
  return parsed.data;
}

/** The `--timeout-<stage>` values that were given, in seconds. */
export function timeoutsFrom(options: EvalOptions): Partial<StageTimeoutsSeconds> {
  const record = options as Record<string, unknown>;
  const timeouts: Partial<StageTimeoutsSeconds> = {};
  for (const stage of TIMEOUT_STAGES) {
    const value = record[timeoutOptionName(stage)];
    if (typeof value === 'number') timeouts[stage] = value;
  }
  return timeouts;
}

/**
 * The request for one (problem, candidate) pair under `kforge eval`'s options, the same for a single
 * candidate and for each candidate of a batch, so that no flag is honoured by one and dropped by
 * the other.
 */
export function evaluationRequestOf(
  pair: { problemPath: string; candidatePath: string },
  backend: Backend,
  options: EvalOptions,
  overrides: Record<string, number | boolean>,
): EvaluationRequest {
  return {
    ...(Object.keys(overrides).length > 0 ? { overrides } : {}),
    ...(options.shape !== undefined ? { shape: options.shape } : {}),
    ...(options.wait !== undefined ? { deviceWaitMs: parseDuration(options.wait) } : {}),
    problemPath: pair.problemPath,
    candidatePath: pair.candidatePath,
    backend,
    precision: options.precision,
    tolerance: options.tolerance,
    preset: options.preset,
    trials: options.trials,
    perfTrials: options.perfTrials,
    warmupTrials: options.warmup,
    deviceIndex: options.device,
    refreshBaselines: options.refreshBaselines,
    skipTiming: !options.timing,
    guardPolicy: options.guardPolicy,
    shapes: options.shapes,
    shapesGate: options.shapesGate,
    crossCheck: options.crossCheck,
    ...(options.timingBudget !== undefined ? { timingBudgetMs: options.timingBudget * 1000 } : {}),
    ...(options.warmupMs !== undefined ? { warmupMs: options.warmupMs } : {}),
    timeoutsSeconds: timeoutsFrom(options),
  };
}
