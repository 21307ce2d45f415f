import { z } from 'zod';
import { backendSchema, precisionSchema, presetSchema } from '../../core/verdict.js';
import { PROTOCOL_VERSION, savedOutputSchema } from './protocol.js';

/**
 * Parent → worker requests of protocol version 1 (docs/worker-protocol.md), written to the
 * worker's stdin. Validated before they are written, so a bug on this side fails loudly.
 */
const version = z.literal(PROTOCOL_VERSION);
const seed = z.number().int().nonnegative();

const seedList = z.array(seed).min(1);

/** The guard's settings, the same object for both roles (docs/worker-protocol.md). */
const guardSettings = z.object({ policy: z.string().min(1), gate_specialisation: z.boolean() });

/** Module constants of the problem replaced before it runs (`kforge eval --set`), the same for both roles. */
export const problemOverridesSchema = z.record(z.string().regex(/^[A-Za-z_]\w*$/), z.union([z.number(), z.boolean()]));
export type ProblemOverrides = z.infer<typeof problemOverridesSchema>;

/** Bytes of device (or, on cpu, host) memory the evaluation was granted: the worker's out-of-memory blame rule. */
const memoryGrant = z.number().int().positive();
/** A warm-up by time, ms (docs/timing.md). */
const warmupMs = z.number().nonnegative().finite();

export const referenceRequestSchema = z.object({
  v: version,
  type: z.literal('reference'),
  problem: z.string().min(1),
  backend: backendSchema,
  precision: precisionSchema,
  preset: presetSchema,
  device: z.string().min(1),
  correctness_seeds: seedList,
  timing_seeds: z.array(seed),
  atol: z.number().nonnegative().optional(),
  rtol: z.number().nonnegative().optional(),
  /** `--precision native`: the profile's tolerance per reference output dtype (src/core/tolerance.ts). */
  dtype_tolerances: z.record(z.string(), z.object({ atol: z.number().nonnegative(), rtol: z.number().nonnegative() })).optional(),
  /** Whether a tolerance the problem declares for its output's dtype wins over atol/rtol (the `kernelbench` profile). */
  declared_tolerance: z.boolean().optional(),
  ceilings: z.object({ bandwidth_bytes_per_s: z.number().positive(), peak_flops_per_s: z.number().positive().nullable() }).optional(),
  guard: guardSettings.optional(),
  generalisation_seeds: z.array(seed).optional(),
  overrides: problemOverridesSchema.optional(),
  memory_grant_bytes: memoryGrant.optional(),
  /** The reference stage's limit, ms: a problem too slow for it at these sizes is a \`fault\` (resource \`time\`) after its first trial. */
  stage_limit_ms: z.number().positive().optional(),
  /** Where the judge makes the hand-over pipe, a FIFO the candidate writes outputs into (docs/worker-protocol.md, "The output hand-over"). */
  handover_pipe: z.string().min(1).optional(),
  /** The candidate's hand-over socket, which its launcher made: cuda outputs come over it by descriptor. */
  handover_socket: z.string().min(1).optional(),
  baselines: z
    .object({
      eager: z.boolean(),
      compile: z.boolean(),
      perf_trials: z.number().int().positive(),
      warmup_trials: z.number().int().nonnegative(),
      /** Host time each baseline's calls may take, ms (docs/timing.md, budget). */
      budget_ms: z.number().positive().optional(),
      /** Warm-up by time: warm up on past `warmup_trials` (at least one) until this much host time has passed, ms. */
      warmup_ms: warmupMs.optional(),
    })
    .nullable(),
});
export type ReferenceRequest = z.infer<typeof referenceRequestSchema>;

export const candidateRequestSchema = z.object({
  v: version,
  type: z.literal('candidate'),
  problem: z.string().min(1),
  candidate: z.string().min(1),
  backend: backendSchema,
  precision: precisionSchema,
  preset: presetSchema,
  device: z.string().min(1),
  correctness_seeds: seedList,
  timing_seeds: z.array(seed),
  perf_trials: z.number().int().nonnegative(),
  warmup_trials: z.number().int().nonnegative(),
  build_dir: z.string().min(1),
  /** The hand-over pipe the judge makes (docs/worker-protocol.md, "The output hand-over"). */
  handover_pipe: z.string().min(1).optional(),
  /** Write `built` after the build stage and wait for `continue`/`stop` before loading (pipelined evaluation). */
  await_device: z.boolean().optional(),
  guard: guardSettings.optional(),
  generalisation_seeds: z.array(seed).optional(),
  overrides: problemOverridesSchema.optional(),
  memory_grant_bytes: memoryGrant.optional(),
  /** Time the candidate a second way after the timed calls (`--cross-check`). */
  cross_check: z.boolean().optional(),
  /** Warm-up by time, paced by the parent: it may ask for warm-up calls past `warmup_trials`, up to the worker's limit. */
  warmup_ms: warmupMs.optional(),
});
export type CandidateRequest = z.infer<typeof candidateRequestSchema>;

export const judgeRequestSchema = z.object({
  v: version,
  type: z.literal('judge'),
  atol: z.number().nonnegative(),
  rtol: z.number().nonnegative(),
  /** The judge stage's limit, ms: the worker stops with a `time` fault when its pace would pass it (JudgePace, worker/kforge_worker/roles/reference_pace.py). */
  stage_limit_ms: z.number().positive().optional(),
  /** Handed-over outputs with their headers, as the candidate described them (`handover`'s `output`). */
  outputs: z
    .array(
      savedOutputSchema
        .extend({
          input_digest: z.string().nullable().optional(),
          input_seed: seed.optional(),
          variant: z.record(z.string(), z.number()).optional(),
        })
        .passthrough(),
    )
    .min(1),
});
export type JudgeRequest = z.infer<typeof judgeRequestSchema>;

export const stopRequestSchema = z.object({ v: version, type: z.literal('stop') });

/**
 * The judge is ready for a handed-over output: send its allocation's descriptor over the hand-over
 * socket (`transport: 'descriptor'`), or write its bytes into the hand-over pipe.
 */
export const handoverSendRequestSchema = z.object({ v: version, type: z.literal('handover-send'), transport: z.literal('descriptor').optional() });

/** The judge holds its own copy of the handed-over output and has judged it: the candidate goes on. */
export const handoverDoneRequestSchema = z.object({ v: version, type: z.literal('handover-done') });

/** Go on; the `continue` that starts the timing stage may fix the contents per timed model. */
export const continueRequestSchema = z.object({
  v: version,
  type: z.literal('continue'),
  contents_per_model: z.number().int().positive().optional(),
  /** The grant the evaluation got with its device (the candidate's out-of-memory blame rule). */
  memory_grant_bytes: memoryGrant.optional(),
});

/**
 * The parent's answer to `called` (docs/timing.md): keep this timed call's output or not, then
 * the next call, a trusted batch of `calls` calls, or the end of the phase.
 */
export const stepRequestSchema = z.object({
  v: version,
  type: z.literal('step'),
  keep: z.boolean(),
  next: z.enum(['call', 'batch', 'end']),
  calls: z.number().int().positive().optional(),
  reseed: z.boolean().optional(),
});

/** Start the batch (the parent's clock starts here). */
export const goRequestSchema = z.object({ v: version, type: z.literal('go') });

/** Which of the batch's outputs to hand over, chosen after `batch-done`. */
export const batchKeepRequestSchema = z.object({ v: version, type: z.literal('batch-keep'), calls: z.array(z.number().int().nonnegative()).min(1) });

/** Reference role: answer with `pong` at once. */
export const pingRequestSchema = z.object({ v: version, type: z.literal('ping') });

/** Reference role: re-time eager now, for re-anchoring cached baselines. */
export const anchorRequestSchema = z.object({
  v: version,
  type: z.literal('anchor'),
  perf_trials: z.number().int().positive(),
  warmup_trials: z.number().int().nonnegative(),
  budget_ms: z.number().positive().optional(),
  warmup_ms: warmupMs.optional(),
});

export const workerRequestSchema = z.discriminatedUnion('type', [
  referenceRequestSchema,
  candidateRequestSchema,
  judgeRequestSchema,
  stopRequestSchema,
  handoverSendRequestSchema,
  handoverDoneRequestSchema,
  continueRequestSchema,
  stepRequestSchema,
  goRequestSchema,
  batchKeepRequestSchema,
  pingRequestSchema,
  anchorRequestSchema,
]);
export type WorkerRequest = z.infer<typeof workerRequestSchema>;
