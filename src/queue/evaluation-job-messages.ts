import { z } from 'zod';
import { evaluationResultSchema } from '../core/verdict.js';
import type { EvaluationProgress } from '../eval/evaluator.js';
import { MACHINE_FAULT_RESOURCES } from '../eval/machine-fault-error.js';
import { workerRoleSchema } from '../eval/worker-role.js';
import type { PipelineEvent } from '../eval/pipeline-events.js';

/** One start of a job on a worker (recorded in Redis when the worker takes the job). */
export const jobAttemptSchema = z.object({
  /** 1 for the first start. */
  attempt: z.number().int().positive(),
  workerId: z.string().min(1),
  host: z.string().min(1),
  pid: z.number().int().positive(),
  /** ISO 8601 time the worker took the job. */
  startedAt: z.string().min(1),
});
export type JobAttempt = z.infer<typeof jobAttemptSchema>;

/** What a worker stores as the job's return value: the result, and who produced it after which attempts. */
export const evaluationJobOutcomeSchema = z.object({
  v: z.literal(1),
  result: evaluationResultSchema,
  workerId: z.string().min(1),
  host: z.string().min(1),
  /** Every start of the job, this one last (earlier ones lost their worker). */
  attempts: z.array(jobAttemptSchema),
  /** Wall time of this attempt on the worker, in ms. */
  durationMs: z.number().nonnegative(),
});
export type EvaluationJobOutcome = z.infer<typeof evaluationJobOutcomeSchema>;

const roleSchema = z.enum(['reference', 'candidate']);
const evaluationProgressSchema: z.ZodType<EvaluationProgress> = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('stage-started'), role: roleSchema, stage: z.string() }),
  z.object({ kind: z.literal('stage-finished'), role: roleSchema, stage: z.string(), durationMs: z.number() }),
]);
const pipelineEventSchema: z.ZodType<PipelineEvent> = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('build-started'), device: z.string(), buildKey: z.string().nullable(), previouslyBuilt: z.boolean(), waitedMs: z.number() }),
  z.object({
    kind: z.literal('build-finished'),
    device: z.string(),
    buildKey: z.string().nullable(),
    built: z.boolean(),
    cacheHit: z.boolean().nullable(),
    durationMs: z.number().nullable(),
  }),
  z.object({ kind: z.literal('device-acquired'), device: z.string(), waitedMs: z.number() }),
  z.object({ kind: z.literal('device-released'), device: z.string(), heldMs: z.number() }),
  // Two kinds of wait share `kind`: a union on `reason` inside (zod refuses a repeated discriminator value).
  z.discriminatedUnion('reason', [
    z.object({
      kind: z.literal('device-waiting'),
      device: z.string(),
      reason: z.literal('lock'),
      holder: z.object({ pid: z.number().nullable(), command: z.string().nullable() }),
    }),
    z.object({
      kind: z.literal('device-waiting'),
      device: z.string(),
      reason: z.literal('memory'),
      neededBytes: z.number(),
      freeBytes: z.number(),
      capacityBytes: z.number(),
      holders: z.array(
        z.object({ pid: z.number(), label: z.string(), bytes: z.number(), since: z.string(), kind: z.enum(['evaluation', 'context']).default('evaluation') }),
      ),
      contextCapBytes: z.number().optional(),
    }),
  ]),
]);

/** A job's progress as a worker publishes it (`job.updateProgress`), relayed by the coordinator as events. */
export const jobProgressSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('stage'), workerId: z.string(), progress: evaluationProgressSchema }),
  z.object({ kind: z.literal('pipeline'), workerId: z.string(), event: pipelineEventSchema }),
]);
export type JobProgress = z.infer<typeof jobProgressSchema>;

/**
 * Why a job ended in BullMQ's `failed` state (a kforge fault, the machine's, or a cancellation, never
 * a candidate's failure). A `machine` failure carries what the coordinator needs to rebuild the
 * worker's MachineFaultError: what ran out, where, and when to try again.
 */
export const jobFailureSchema = z.object({
  kforge: z.literal(1),
  kind: z.enum(['setup', 'machine', 'cancelled', 'invalid-payload', 'internal']),
  message: z.string(),
  hint: z.string().optional(),
  machine: z
    .object({
      resource: z.enum(MACHINE_FAULT_RESOURCES),
      role: workerRoleSchema.optional(),
      stage: z.string().nullable(),
      retryAfterSeconds: z.number().nonnegative(),
    })
    .optional(),
});
export type JobFailure = z.infer<typeof jobFailureSchema>;

/** The text a worker fails a job with (BullMQ keeps an error's message as `failedReason`). */
export function encodeJobFailure(failure: Omit<JobFailure, 'kforge'>): string {
  return JSON.stringify({ kforge: 1, ...failure });
}

/** The failure a worker encoded, or an `internal` one around a reason of BullMQ's own (e.g. a stall limit). */
export function decodeJobFailure(failedReason: string | undefined): JobFailure {
  try {
    const parsed = jobFailureSchema.safeParse(JSON.parse(failedReason ?? ''));
    if (parsed.success) return parsed.data;
  } catch {
    // Not one of ours: fall through.
  }
  return { kforge: 1, kind: 'internal', message: failedReason || 'the job failed without a reason' };
}
