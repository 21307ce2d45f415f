import { z } from 'zod';
import { verdictSchema, VERDICTS } from '../../core/verdict.js';
import { runStatusSchema } from '../../store/store-records.js';

/**
 * The data of `kforge report` (its `json` format) and of the run comparison. Metrics follow
 * docs/spec.md section 7: `fast_p` over all problems, failures included; geometric means over the
 * correct ones.
 */

const verdictCountsSchema = z.object(
  Object.fromEntries(VERDICTS.map((verdict) => [verdict, z.number().int()])) as Record<(typeof VERDICTS)[number], z.ZodNumber>,
);

export const reportProblemSchema = z.object({
  name: z.string(),
  hash: z.string(),
  level: z.string(),
  path: z.string().nullable(),
  candidates: z.number().int(),
  evaluated: z.number().int(),
  correct: z.number().int(),
  verdictCounts: verdictCountsSchema,
  /** Verdict of the reported candidate, or the furthest verdict reached when none was correct. */
  verdict: verdictSchema.nullable(),
  /** The accepted candidate when a person accepted one, else the fastest correct one. */
  candidateId: z.number().int().nullable(),
  chosenBy: z.enum(['accepted', 'fastest', 'none']),
  speedupVsEager: z.number().nullable(),
  speedupVsCompile: z.number().nullable(),
  speedupVsBest: z.number().nullable(),
  medianMs: z.number().nullable(),
  eagerMs: z.number().nullable(),
  compileMs: z.number().nullable(),
  speedOfLightShare: z.number().nullable(),
  /** The reported candidate's own kernels' share of its traced call's time (attribution.own_share). */
  ownShare: z.number().nullable().optional(),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  costUsd: z.number().nullable(),
  gpuSeconds: z.number(),
  /** Best speedup over the best baseline after each evaluated candidate, in evaluation order. */
  bestSoFar: z.array(z.object({ evaluated: z.number().int(), minutes: z.number(), speedup: z.number().nullable() })),
});
export type ReportProblem = z.infer<typeof reportProblemSchema>;

export const fastPRowSchema = z.object({
  p: z.number(),
  /** Share of the group's problems, in [0, 1], against eager (KernelBench's `fast_p`). */
  vsEager: z.number(),
  /** The same against the faster of eager and `torch.compile`. */
  vsBest: z.number(),
});

export const reportGroupSchema = z.object({
  /** `level1`…, or `all`. */
  level: z.string(),
  problems: z.number().int(),
  correctProblems: z.number().int(),
  fastP: z.array(fastPRowSchema),
  geomeanSpeedupVsEager: z.number().nullable(),
  geomeanSpeedupVsCompile: z.number().nullable(),
  geomeanSpeedupVsBest: z.number().nullable(),
  /** Mean share of speed of light over problems that have a roofline bound. */
  meanSpeedOfLightShare: z.number().nullable(),
  candidates: z.number().int(),
  verdictCounts: verdictCountsSchema,
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  costUsd: z.number().nullable(),
  gpuSeconds: z.number(),
});
export type ReportGroup = z.infer<typeof reportGroupSchema>;

export const runReportSchema = z.object({
  generatedAt: z.string(),
  store: z.string(),
  run: z.object({
    id: z.string(),
    status: runStatusSchema,
    strategy: z.string(),
    model: z.string(),
    backend: z.string().nullable(),
    precision: z.string().nullable(),
    /** The guard policy the run's verdicts (and so its `fast_p`) were judged under. */
    guardPolicy: z.string().nullable().optional(),
    startedAt: z.string(),
    finishedAt: z.string().nullable(),
    /** Work not tied to one problem is counted here and in `total` only. */
    modelCalls: z.number().int(),
  }),
  problems: z.array(reportProblemSchema),
  levels: z.array(reportGroupSchema),
  total: reportGroupSchema,
});
export type RunReportData = z.infer<typeof runReportSchema>;

export const runComparisonSchema = z.object({
  a: runReportSchema,
  b: runReportSchema,
  /** Problems of either run, matched by content hash; `ratio` is b's speedup over a's (vs the best baseline). */
  problems: z.array(
    z.object({
      hash: z.string(),
      name: z.string(),
      level: z.string(),
      a: reportProblemSchema.nullable(),
      b: reportProblemSchema.nullable(),
      ratio: z.number().nullable(),
    }),
  ),
  /** Problems both runs have. */
  shared: z.number().int(),
});
export type RunComparison = z.infer<typeof runComparisonSchema>;
