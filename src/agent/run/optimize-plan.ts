import { z } from 'zod';
import { guardPolicyNameSchema } from '../../core/guard-policy.js';
import { modelSettingsSchema } from '../../core/config.js';
import { backendSchema, precisionSchema, presetSchema, toleranceProfileSchema } from '../../core/verdict.js';
import { strategyNameSchema } from '../search/state/attempt.js';
import { stallPolicySchema } from '../search/state/stall-detector.js';

const positiveInteger = z.number().int().positive();

/** A problem folder's declarations as a prompt shows them: its name, shapes, forbidden names and declared tolerance. */
export const problemFolderNotesSchema = z.object({
  name: z.string().min(1),
  /** Each shape as shapes.py writes it. */
  shapes: z.array(z.record(z.string(), z.union([z.number(), z.boolean()]))),
  forbidden: z.array(z.string()).default([]),
  /** problem.yaml's `tolerance` as written (per dtype). */
  tolerance: z.unknown().optional(),
});
export type ProblemFolderNotes = z.infer<typeof problemFolderNotesSchema>;

const positiveNumber = z.number().positive();

const budgetLimitsSchema = z.object({
  maxCandidates: positiveInteger.optional(),
  maxWallMs: positiveNumber.optional(),
  maxTokens: positiveInteger.optional(),
  maxCostUsd: positiveNumber.optional(),
  maxDeviceSeconds: positiveNumber.optional(),
  targetSpeedup: positiveNumber.optional(),
});

/**
 * Everything an optimize run needs to run, and to be resumed: stored as the run's `config`, so
 * `kforge optimize --resume RUN_ID` continues with exactly these settings. Secrets never go in.
 */
export const optimizePlanSchema = z.object({
  version: z.literal(1),
  /** Problem files, absolute paths, in run order. */
  problems: z.array(z.string().min(1)).min(1),
  /** The file each problem came from in this run, by content hash (filled in when the run is created). */
  problemPaths: z.record(z.string(), z.string()).default({}),
  /**
   * Module constants each problem is evaluated with (`--set`, `--fit`; docs/sizes.md), by the
   * absolute path in `problems`; a problem not named runs at its own sizes. Kept with the run, so a
   * resume evaluates at the same sizes.
   */
  problemOverrides: z.record(z.string(), z.record(z.string(), z.union([z.number(), z.boolean()]))).default({}),
  /**
   * What each problem folder declares (docs/problems.md), by the absolute path in `problems` of its
   * reference.py: shown to the model beside the reference. The evaluator reads the folder itself.
   */
  problemFolders: z.record(z.string(), problemFolderNotesSchema).default({}),
  strategy: strategyNameSchema,
  strategies: z
    .object({
      refine: z.object({ restartAfterFailures: positiveInteger.optional(), historyLines: positiveInteger.optional() }).default({}),
      sample: z.object({ samples: positiveInteger.optional(), width: positiveInteger.optional() }).default({}),
      ideas: z
        .object({
          rounds: positiveInteger.optional(),
          ideasPerRound: positiveInteger.optional(),
          implementationsPerIdea: positiveInteger.optional(),
          seeds: positiveInteger.optional(),
          bankSize: z.number().int().nonnegative().optional(),
          fixTurns: z.number().int().nonnegative().optional(),
          width: positiveInteger.optional(),
        })
        .default({}),
    })
    .default({ refine: {}, sample: {}, ideas: {} }),
  /** Per problem: candidates, wall clock, target speedup. */
  perProblem: budgetLimitsSchema,
  /** Whole run: tokens, cost, device seconds. */
  total: budgetLimitsSchema,
  evaluation: z.object({
    backend: backendSchema,
    precision: precisionSchema,
    tolerance: toleranceProfileSchema,
    /** Left out means the evaluator's default (`default`). */
    guardPolicy: guardPolicyNameSchema('guardPolicy').optional(),
    preset: presetSchema.optional(),
    trials: positiveInteger.optional(),
    perfTrials: positiveInteger.optional(),
    warmupTrials: z.number().int().nonnegative().optional(),
    /** Warm-up by time, ms (left out: 1000 on a GPU, 0 on cpu). */
    warmupMs: z.number().nonnegative().finite().optional(),
    deviceIndex: z.number().int().nonnegative().optional(),
    timeoutsSeconds: z.record(z.string(), positiveNumber).optional(),
  }),
  stall: z.object({
    /** Candidates without a better one before a problem counts as stalled. */
    patience: positiveInteger,
    policy: stallPolicySchema,
    /** The strategy a stalled problem is handed to under `switch-strategy`. */
    switchTo: strategyNameSchema.optional(),
  }),
  /** The model's settings as `createKernelModel` takes them, without the API key (read from the environment again on resume). */
  model: modelSettingsSchema.omit({ apiKey: true }),
  /** LLM calls at once per provider (the run's model uses `concurrency[provider]`, else `defaultConcurrency`). */
  concurrency: z.record(z.string(), positiveInteger).default({}),
  defaultConcurrency: positiveInteger.default(4),
  /** The baseline of `--target-speedup` and of "best speedup" in progress: `best` is the faster of eager and compile. */
  speedupBaseline: z.enum(['eager', 'compile', 'best']).default('best'),
  /** Relative gain in median time that counts as an improvement (0.01 = 1%). */
  minRelativeGain: z.number().nonnegative().default(0.01),
  /** Where the best kernel of each problem and its verdict JSON are written. */
  outDir: z.string().min(1),
  /** Where candidate files are written for the evaluator. */
  candidatesDir: z.string().min(1),
});
export type OptimizePlan = z.infer<typeof optimizePlanSchema>;
/** A plan as a caller writes it (defaults not yet applied). */
export type OptimizePlanInput = z.input<typeof optimizePlanSchema>;

/**
 * The run's evaluation settings for one problem (by the absolute path it was given as), with its
 * sizes where `--set` or `--fit` gave it some.
 */
export function problemEvaluation(plan: OptimizePlan, problemPath: string): OptimizePlan['evaluation'] & { overrides?: Record<string, number | boolean> } {
  const overrides = plan.problemOverrides[problemPath];
  return overrides && Object.keys(overrides).length > 0 ? { ...plan.evaluation, overrides } : plan.evaluation;
}
