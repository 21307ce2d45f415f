import { z } from 'zod';
import { guardFindingSchema, guardReportSchema, speedOfLightSchema as coreSpeedOfLightSchema, stagedGuardCheckSchema } from '../../core/guard-report.js';
import { evaluationResultSchema } from '../../core/verdict.js';
import { candidateOriginSchema, chatMessageSchema } from '../../store/store-records.js';
import { candidateNodeSchema } from './problem-schemas.js';

export const modelCallSchema = z.object({
  id: z.number().int(),
  model: z.string(),
  round: z.number().int().nullable(),
  messages: z.array(chatMessageSchema),
  replyText: z.string().nullable(),
  reasoningText: z.string().nullable(),
  inputTokens: z.number().int().nullable(),
  outputTokens: z.number().int().nullable(),
  latencyMs: z.number().nullable(),
  costUsd: z.number().nullable(),
  error: z.string().nullable(),
  createdAt: z.string(),
});

export const evaluationSchema = z.object({
  id: z.number().int(),
  result: evaluationResultSchema,
  gpuSeconds: z.number(),
  reusedFromEvaluationId: z.number().int().nullable(),
  createdAt: z.string(),
});

/**
 * A roofline comparison: the bound the work cannot beat and the share of it the candidate reached
 * (from the result's `guard.speed_of_light`, src/core/guard-report.ts).
 */
export const speedOfLightSchema = z.object({
  /** The least time the reference's work can take on this device, in ms. */
  lowerBoundMs: z.number(),
  /** `lowerBoundMs / candidate median`; 1 is at the roofline, above 1 is physically suspect. */
  share: z.number(),
  /** Bytes the bound assumes moved and FLOPs it assumes done (null where unknown). */
  bytes: coreSpeedOfLightSchema.shape.bytes,
  flops: coreSpeedOfLightSchema.shape.flops,
});

/**
 * The guard's report (docs/guard.md): static findings, run-time checks, notes; the fields of the
 * result's `guard` (src/core/guard-report.ts) the page shows, with a finding's line null where it has none.
 */
export const guardDetailsSchema = z.object({
  policy: guardReportSchema.shape.policy,
  findings: z.array(
    z.object({
      check: guardFindingSchema.shape.check,
      severity: guardFindingSchema.shape.severity,
      message: guardFindingSchema.shape.message,
      line: z.number().int().nullable(),
    }),
  ),
  checks: z.array(
    z.object({
      stage: stagedGuardCheckSchema.shape.stage,
      check: stagedGuardCheckSchema.shape.check,
      status: stagedGuardCheckSchema.shape.status,
      message: stagedGuardCheckSchema.shape.message,
    }),
  ),
  notes: guardReportSchema.shape.notes,
});

/** Per-kernel resources of a CUDA build (from `cuobjdump --dump-resource-usage`): the result's `build.kernels` (src/core/build-info.ts) in camelCase. */
export const kernelResourcesSchema = z.object({
  name: z.string(),
  arch: z.string().nullable(),
  registers: z.number().nullable(),
  sharedBytes: z.number().nullable(),
  stackBytes: z.number().nullable(),
  /** Local memory per thread: non-zero means register spills (or local arrays). */
  localBytes: z.number().nullable(),
});

export const buildDetailsSchema = z.object({
  kernels: z.array(kernelResourcesSchema),
  ptx: z.string(),
  sass: z.string(),
  /** Why the build figures are missing (no cuobjdump), when they are. */
  error: z.string().nullable(),
});

export const candidateDetailSchema = z.object({
  candidate: candidateNodeSchema.extend({
    runId: z.string(),
    problemHash: z.string(),
    problemName: z.string(),
    source: z.string(),
    sourceHash: z.string(),
    origin: candidateOriginSchema,
    modelCallId: z.number().int().nullable(),
  }),
  evaluation: evaluationSchema.nullable(),
  /** The parent's source, for the diff; null for a root. */
  parent: z.object({ id: z.number().int(), source: z.string() }).nullable(),
  /** From the root down to the candidate. */
  lineage: z.array(z.object({ id: z.number().int(), round: z.number().int(), ideaLabel: z.string().nullable(), origin: candidateOriginSchema })),
  children: z.array(z.number().int()),
  modelCall: modelCallSchema.nullable(),
  speedOfLight: speedOfLightSchema.nullable(),
  guard: guardDetailsSchema.nullable(),
  build: buildDetailsSchema.nullable(),
  acceptance: z.object({ note: z.string().nullable(), createdAt: z.string() }).nullable(),
  /** Set when the dashboard's own evaluation of an edit failed for a reason of the evaluator's. */
  evaluationError: z.string().nullable(),
});
export type CandidateDetail = z.infer<typeof candidateDetailSchema>;
