/**
 * Longer than convention 4's 300 lines: this file is the evaluation result's contract, every schema
 * a verdict is built of (timing, correctness, memory, diagnostics, shapes), read beside docs/spec.md
 * and the worker's Python that writes it; one change to the result touches it in one place.
 */
import { z } from 'zod';
import { buildInfoSchema } from './build-info.js';
import { guardReportSchema } from './guard-report.js';

/**
 * The eight verdicts of docs/spec.md section 3. Every evaluation ends in exactly one.
 */
export const VERDICTS = ['correct', 'incorrect', 'compile_error', 'runtime_error', 'timeout', 'crashed', 'rejected', 'invalid_input'] as const;

export const verdictSchema = z.enum(VERDICTS);
export type Verdict = z.infer<typeof verdictSchema>;

/** One reason attached to a verdict: a stable check id and a sentence a person can act on. */
export const reasonSchema = z.object({
  check: z.string().min(1),
  message: z.string().min(1),
});
export type Reason = z.infer<typeof reasonSchema>;

export const BACKENDS = ['cuda', 'triton', 'cpu'] as const;
export const backendSchema = z.enum(BACKENDS);
export type Backend = z.infer<typeof backendSchema>;

/**
 * Run precisions (docs/spec.md section 4): `fp32`, `fp16` and `bf16` cast every floating input,
 * parameter and buffer to that dtype; `native` keeps the problem's own dtypes (fp8, bf16, fp16,
 * integer-packed weights).
 */
export const PRECISIONS = ['fp32', 'fp16', 'bf16', 'native'] as const;
export const precisionSchema = z.enum(PRECISIONS);
export type Precision = z.infer<typeof precisionSchema>;

export const TOLERANCE_PROFILES = ['kernelbench', 'strict'] as const;
export const toleranceProfileSchema = z.enum(TOLERANCE_PROFILES);
export type ToleranceProfile = z.infer<typeof toleranceProfileSchema>;

export const PRESETS = ['cpu', 'gpu'] as const;
export const presetSchema = z.enum(PRESETS);
export type Preset = z.infer<typeof presetSchema>;

/** Summary statistics of a series of timed calls, all in milliseconds. */
export const timingStatsSchema = z.object({
  median: z.number(),
  mean: z.number(),
  std: z.number(),
  min: z.number(),
  max: z.number(),
  /** 95% confidence interval of the median (distribution-free, from order statistics). */
  ci95: z.tuple([z.number(), z.number()]),
  n: z.number().int(),
});
export type TimingStats = z.infer<typeof timingStatsSchema>;

/** The first element outside tolerance: its index, the reference's and the candidate's values (non-finite ones as text), its output leaf where there are several. */
export const firstMismatchSchema = z.object({
  index: z.array(z.number().int()),
  expected: z.union([z.number(), z.string()]),
  actual: z.union([z.number(), z.string()]),
  leaf: z.number().int().nullable().optional(),
});
export type FirstMismatch = z.infer<typeof firstMismatchSchema>;

/**
 * One judged correctness trial as the result keeps it (the reference's `judgement` trial,
 * docs/worker-protocol.md). Results stored by older versions may lack the later fields, and
 * their `check` may name a check since renamed, so only `seed` and `passed` are required.
 */
export const trialDetailSchema = z
  .object({
    seed: z.number().int().nonnegative(),
    passed: z.boolean(),
    check: z.string().nullable().optional(),
    message: z.string().nullable().optional(),
    max_abs_error: z.number().nullable().optional(),
    max_rel_error: z.number().nullable().optional(),
    mismatch_count: z.number().int().nonnegative().nullable().optional(),
    numel: z.number().int().nonnegative().nullable().optional(),
    first_mismatch: firstMismatchSchema.nullable().optional(),
  })
  .catchall(z.unknown());
export type TrialDetail = z.infer<typeof trialDetailSchema>;

export const correctnessSummarySchema = z.object({
  trials: z.number().int(),
  passed: z.number().int(),
  /** Largest absolute error of the candidate against the run-precision reference. */
  max_abs_error: z.number().nullable(),
  /** Largest relative error of the candidate against the run-precision reference. */
  max_rel_error: z.number().nullable(),
  /** Elements outside tolerance, summed over trials. */
  mismatch_count: z.number().int().optional(),
  atol: z.number().optional(),
  rtol: z.number().optional(),
  tolerance: toleranceProfileSchema.optional(),
  /** Where atol/rtol came from: the profile (`tolerance`), or the problem's own declaration for `tolerance_dtype` (docs/spec.md section 4). */
  tolerance_source: z.enum(['profile', 'problem']).optional(),
  /** The reference output's dtype that decided the tolerance (`bfloat16`, `float8_e4m3fn`, …); null for an output without tensors. */
  tolerance_dtype: z.string().nullable().optional(),
  /** Error profile against the float64 reference (absent where the problem cannot run in float64). */
  fp64: z.object({ max_abs_error: z.number().nullable(), max_rel_error: z.number().nullable() }).nullable().optional(),
  /** The dtype `fp64` was computed in: `float64`, or `float32` where an operator has no float64 kernel and the run is narrower; null without one. */
  high_precision_dtype: z.enum(['float64', 'float32']).nullable().optional(),
  trial_details: z.array(trialDetailSchema).optional(),
});
export type CorrectnessSummary = z.infer<typeof correctnessSummarySchema>;

/** One timed series' hold (docs/timing.md): its length, and the calls whose launch outran it, of `calls`. */
export const holdFigureSchema = z.object({ hold_ms: z.number(), exposed_calls: z.number().int(), calls: z.number().int() });

export const timingSummarySchema = z.object({
  /** What the per-call times measure: `device` (CUDA events) or `host` (the cpu backend's clock). Absent in results stored before 2026-12-05. */
  clock: z.enum(['device', 'host']).optional(),
  candidate_ms: timingStatsSchema,
  eager_ms: timingStatsSchema.nullable(),
  compile_ms: timingStatsSchema.nullable(),
  compile_unavailable: z.string().optional(),
  /** Why the eager baseline could not be timed, when it could not. */
  eager_unavailable: z.string().optional(),
  /** Host-clock time around each synchronized timed call; far above `candidate_ms` hints at work the events missed. */
  candidate_wall_ms: timingStatsSchema.optional(),
  speedup_vs_eager: z.number().nullable(),
  speedup_vs_compile: z.number().nullable(),
  speedup_vs_best: z.number().nullable(),
  baseline_cached: z.boolean().optional(),
  /** Host-inclusive time of the baselines' timed calls (docs/timing.md). */
  eager_wall_ms: timingStatsSchema.optional(),
  compile_wall_ms: timingStatsSchema.optional(),
  /** The candidate's own in-process statistics, when a trusted bound was applied to them. */
  in_process_ms: timingStatsSchema.optional(),
  /** The parent's trusted batches and the bound they give (docs/timing.md, P1). */
  trusted: z
    .object({
      batches: z.number().int(),
      calls: z.number().int(),
      trusted_ms: z.number(),
      bound_ms: z.number(),
      overhead_ms: z.number(),
      source: z.enum(['in-process', 'trusted-batch']),
      loose: z.boolean(),
      /** Back-to-back over single-call time of eager beside the candidate (1: an idle host); the bound was divided by it. */
      load_factor: z.number().optional(),
    })
    .optional(),
  /**
   * cuda: the spin kernel held ahead of each timed call's flush so the host's launch stays out of
   * the device time, and the timed calls whose launch outran it anyway (docs/timing.md); null for a
   * figure measured without these fields (a baseline cached before them).
   */
  hold: z.object({ candidate: holdFigureSchema.nullable(), eager: holdFigureSchema.nullable(), compile: holdFigureSchema.nullable() }).optional(),
  /** Which figures are launch-bound: host-inclusive time well above device time (device clock only). */
  launch_bound: z.object({ candidate: z.boolean(), eager: z.boolean(), compile: z.boolean() }).optional(),
  /** The timing stage's time budget: calls asked for and made, and why fewer. */
  budget: z
    .object({
      budget_ms: z.number(),
      requested_calls: z.number().int(),
      timed_calls: z.number().int(),
      requested_warmup: z.number().int(),
      warmup_calls: z.number().int(),
      /** The warm-up by time asked for and the host time the warm-up took, ms (absent in verdicts before it). */
      requested_warmup_ms: z.number().optional(),
      warmup_ms: z.number().optional(),
      reason: z.string().nullable(),
    })
    .optional(),
  /** `--cross-check`: a second timing method and how it compares. */
  cross_check: z
    .object({
      method: z.string(),
      median_ms: z.number(),
      ratio: z.number().nullable(),
      bound: z.number(),
      agrees: z.boolean(),
      finding: z.string().optional(),
      /** cuda: the sum of the call's kernels' own durations (CUPTI, as ncu's gpu__time_duration.sum), or why not. */
      kernels: z
        .object({
          method: z.string(),
          median_ms: z.number().optional(),
          ratio: z.number().nullable().optional(),
          agrees: z.boolean().optional(),
          finding: z.string().optional(),
          unavailable: z.string().optional(),
        })
        .optional(),
    })
    .optional(),
  /** Eager re-timed beside the candidate, and whether the cached baselines still hold. */
  baseline_anchor: z
    .object({
      eager_ms: timingStatsSchema,
      agreed: z.boolean(),
      drift: z.number(),
      used: z.enum(['cached', 'measured', 'anchor']),
      compile_unconfirmed: z.boolean(),
      too_busy: z.boolean(),
      reasons: z.array(z.string()),
    })
    .optional(),
});
export type TimingSummary = z.infer<typeof timingSummarySchema>;

export const environmentSchema = z
  .object({
    device: z.string(),
    torch: z.string(),
    cuda: z.string().nullable(),
    driver: z.string().nullable(),
    python: z.string().optional(),
  })
  .catchall(z.unknown());
export type Environment = z.infer<typeof environmentSchema>;

/** One PyTorch operator of the traced correctness call (docs/spec.md section 8). */
export const attributedOperatorSchema = z
  .object({
    op: z.string(),
    /** Device time of its kernels (cuda, triton) or its host time (cpu), in milliseconds. */
    ms: z.number().nonnegative(),
    /** Whether the reference's own forward runs this operator (null where the reference was not traced). */
    in_reference: z.boolean().nullable(),
    /** Whether the guard counts it as PyTorch doing the work: false for glue that launched a kernel (a copy, a fill) and scalar bookkeeping. */
    compute: z.boolean().optional(),
  })
  .catchall(z.unknown());

/**
 * Where the time of one traced correctness call went (docs/spec.md section 8): the candidate's own
 * kernels, vendor libraries called from its native code, PyTorch operators. Present on every
 * `correct` and `rejected` verdict; `own_share` is null (and `unavailable` says why) where the
 * call could not be measured (rejected before it ran, a torch without the trace).
 */
export const attributionSchema = z
  .object({
    own_share: z.number().min(0).max(1).nullable(),
    by_origin_ms: z.object({ own: z.number(), library: z.number(), torch: z.number() }).nullable(),
    torch_ops: z.array(attributedOperatorSchema),
    /** PyTorch operators the reference never runs that did work (`compute`), whatever their share of the time. */
    substituted_ops: z.array(z.string()),
    /** `device` (kernel durations from the profiler) or `host` (the cpu backend's operator times). */
    measured: z.enum(['device', 'host']).optional(),
    unavailable: z.string().optional(),
    notes: z.array(z.string()).optional(),
  })
  .catchall(z.unknown());
export type Attribution = z.infer<typeof attributionSchema>;
/**
 * A process's memory peaks in bytes (device: the CUDA allocator's reserved bytes, what other
 * processes cannot use, and its allocated bytes, the tensors' own; host: the resident set's
 * high-water mark).
 */
export const memoryPeaksSchema = z.object({
  device_peak_bytes: z.number().nullable(),
  device_allocated_peak_bytes: z.number().nullable().optional(),
  host_peak_bytes: z.number().nullable(),
});

/** One role's peaks over the evaluation, and per stage. */
export const roleMemorySchema = memoryPeaksSchema.extend({ stages: z.record(z.string(), memoryPeaksSchema) });
export type RoleMemory = z.infer<typeof roleMemorySchema>;

/** Peak memory per role of one evaluation, as the workers measured it, and the estimate made before it ran. */
export const evaluationMemorySchema = z.object({
  reference: roleMemorySchema.optional(),
  candidate: roleMemorySchema.optional(),
  /** Bytes estimated from the problem's shapes before the evaluation started (its peak on the device, or on the host on cpu). */
  estimate_bytes: z.number().optional(),
});
export type EvaluationMemory = z.infer<typeof evaluationMemorySchema>;

/**
 * What the candidate's processes said: their stdout and stderr (capped) always; on a failure the
 * compiler's output, the first error and a known cause (build and load failures, `compile_error`)
 * and the traceback where Python raised (src/eval/run/failure-outcome.ts).
 */
export const diagnosticsSchema = z.object({
  compiler: z.string().optional(),
  first_error: z.string().optional(),
  known_cause: z.string().optional(),
  stdout: z.string(),
  stderr: z.string(),
  traceback: z.string().optional(),
});
export type Diagnostics = z.infer<typeof diagnosticsSchema>;

/**
 * A `correct` verdict's diagnostics: its output only. Nothing failed, so there is no compiler
 * output, first error, known cause or traceback (those come only from a worker's `failure`).
 */
export const outputDiagnosticsSchema = diagnosticsSchema.extend({
  compiler: z.never().optional(),
  first_error: z.never().optional(),
  known_cause: z.never().optional(),
  traceback: z.never().optional(),
});

/** A shape's values as shapes.py writes them, and the module constants set: numbers or booleans. */
const shapeValuesSchema = z.record(z.string(), z.union([z.number(), z.boolean()]));

/**
 * The timing figures of one `correct` shape of a problem folder's sweep, in milliseconds (medians),
 * and its speedups (null where that baseline was not measured).
 */
export const shapeTimingSchema = z.object({
  candidate_median_ms: z.number(),
  eager_median_ms: z.number().nullable(),
  compile_median_ms: z.number().nullable(),
  speedup_vs_eager: z.number().nullable(),
  speedup_vs_compile: z.number().nullable(),
  speedup_vs_best: z.number().nullable(),
});
export type ShapeTiming = z.infer<typeof shapeTimingSchema>;

/**
 * One shape of a problem folder's sweep (docs/problems.md, "Problem folders"): its index in
 * shapes.py's `SHAPES`, its values as written there, the module constants it was evaluated with
 * (`--set` included), the keys no constant took, its own verdict and reasons, its error profile, and
 * its timing when it is `correct` and was timed.
 */
export const shapeOutcomeSchema = z.object({
  index: z.number().int().nonnegative(),
  values: shapeValuesSchema,
  overrides: shapeValuesSchema,
  unused: z.array(z.string()),
  verdict: verdictSchema,
  reasons: z.array(reasonSchema),
  max_abs_error: z.number().nullable().optional(),
  max_rel_error: z.number().nullable().optional(),
  timing: shapeTimingSchema.optional(),
});
export type ShapeOutcome = z.infer<typeof shapeOutcomeSchema>;

/** Geometric means of the per-shape speedups of a `correct` sweep; null where a shape lacks that figure. */
export const shapeGeomeanSchema = z.object({
  shapes: z.number().int().positive(),
  speedup_vs_eager: z.number().nullable(),
  speedup_vs_compile: z.number().nullable(),
  speedup_vs_best: z.number().nullable(),
});
export type ShapeGeomean = z.infer<typeof shapeGeomeanSchema>;

/**
 * One stage's time limit as the evaluation applied it: `limit_ms`, and `source`: `reference` (a
 * multiple of the reference's own measured time for the stage's `trials`, with a floor; docs/sizes.md,
 * "Stage limits"), `flag` (a `--timeout-<stage>` the user gave) or `default`.
 */
export const stageLimitReportSchema = z.object({
  limit_ms: z.number().positive(),
  source: z.enum(['reference', 'flag', 'default']),
  trials: z.number().positive().optional(),
});
export type StageLimitReport = z.infer<typeof stageLimitReportSchema>;

/** The result's `stage_limits`: every stage's limit, and the reference's time for one trial they were sized by (null: not measured). */
export const stageLimitsSchema = z.object({
  reference_trial_ms: z.number().nonnegative().nullable(),
  stages: z.record(z.string(), stageLimitReportSchema),
});
export type StageLimits = z.infer<typeof stageLimitsSchema>;

/** Fields every result has, whatever its verdict (docs/spec.md section 6). */
const resultFields = {
  problem: z.string(),
  candidate: z.string(),
  backend: backendSchema,
  precision: precisionSchema,
  preset: presetSchema.optional(),
  /** Present once correctness trials were judged; a later stage can still fail (a timed call, a Triton recompile). */
  correctness: correctnessSummarySchema.optional(),
  diagnostics: diagnosticsSchema,
  /** What a CUDA build produced (docs/worker-protocol.md, `build-info`). */
  build: buildInfoSchema.optional(),
  /** The guard's findings, run-time checks, tolerance audit, speed-of-light bound and notes (docs/guard.md); when the guard ran. */
  guard: guardReportSchema.optional(),
  /** Wall time of each stage the workers finished, in milliseconds, keyed by stage name. */
  stages: z.record(z.string(), z.number()).optional(),
  /** The time limit of each stage and how it was chosen (results stored before it lack it). */
  stage_limits: stageLimitsSchema.optional(),
  /** Peak memory of each worker (per stage too), and the estimate made before the run. */
  memory: evaluationMemorySchema.optional(),
  /** Module constants of the problem replaced for this run (`--set`): figures at other sizes than the problem's own. */
  problem_overrides: z.record(z.string(), z.union([z.number(), z.boolean()])).optional(),
  environment: environmentSchema.nullable(),
  /**
   * A problem folder's sweep: one entry per shape evaluated, in order (absent for a single-file
   * problem and in results stored before 2026-12-07). The rest of the result is the first shape's,
   * or the first failing shape's; docs/problems.md says which figure is which.
   */
  shapes: z.array(shapeOutcomeSchema).optional(),
  /** Only a `correct` sweep has geometric means. */
  shape_geomean: z.never().optional(),
  /** Only a `correct` verdict is timed. */
  timing: z.never().optional(),
  /** Only `correct` and `rejected` verdicts carry attribution. */
  attribution: z.never().optional(),
} as const;

/** Every verdict but `correct` says why in at least one reason. */
const failedReasons = z.array(reasonSchema).min(1);

/**
 * `correct`: no reasons; the judged correctness trials; output-only diagnostics; `timing` unless
 * timing was skipped (`--no-timing`, `skipTiming`); `attribution` on every result since it was
 * added (optional: results stored before lack it).
 */
export const correctResultSchema = z.object({
  verdict: z.literal('correct'),
  reasons: z.array(reasonSchema).max(0),
  ...resultFields,
  correctness: correctnessSummarySchema,
  diagnostics: outputDiagnosticsSchema,
  timing: timingSummarySchema.optional(),
  attribution: attributionSchema.optional(),
  /** A problem folder's sweep, timed: the per-shape speedups' geometric means (also the speedups of `timing`). */
  shape_geomean: shapeGeomeanSchema.optional(),
});

/** `rejected`: the guard's reasons; `attribution` as on `correct`; never timing. */
export const rejectedResultSchema = z.object({
  verdict: z.literal('rejected'),
  reasons: failedReasons,
  ...resultFields,
  attribution: attributionSchema.optional(),
});

/** A verdict that is neither `correct` nor `rejected`: reasons, never timing or attribution. */
function failedResultSchema<V extends Exclude<Verdict, 'correct' | 'rejected'>>(verdict: V) {
  return z.object({ verdict: z.literal(verdict), reasons: failedReasons, ...resultFields });
}

export const incorrectResultSchema = failedResultSchema('incorrect');
export const compileErrorResultSchema = failedResultSchema('compile_error');
export const runtimeErrorResultSchema = failedResultSchema('runtime_error');
export const timeoutResultSchema = failedResultSchema('timeout');
export const crashedResultSchema = failedResultSchema('crashed');
export const invalidInputResultSchema = failedResultSchema('invalid_input');

/**
 * The JSON object `kforge eval --json` prints (docs/spec.md section 6), one variant per verdict:
 * what a result holds follows its verdict as the evaluator assembles it (src/eval/run/evaluation-result.ts).
 * Field names are stable: scripts outside the project read them. Results stored by any earlier
 * version parse too (src/store reads every row through it).
 */
export const evaluationResultSchema = z.discriminatedUnion('verdict', [
  correctResultSchema,
  incorrectResultSchema,
  compileErrorResultSchema,
  runtimeErrorResultSchema,
  timeoutResultSchema,
  crashedResultSchema,
  rejectedResultSchema,
  invalidInputResultSchema,
]);
export type EvaluationResult = z.infer<typeof evaluationResultSchema>;
export type ResultOfVerdict<V extends Verdict> = Extract<EvaluationResult, { verdict: V }>;
export type CorrectResult = ResultOfVerdict<'correct'>;
