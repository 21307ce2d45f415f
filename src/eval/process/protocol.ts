import { z } from 'zod';
import { buildInfoSchema } from '../../core/build-info.js';
import { guardCheckSchema, guardFindingSchema, toleranceAuditSchema } from '../../core/guard-report.js';
import { environmentSchema, firstMismatchSchema, type Environment, type Verdict } from '../../core/verdict.js';
import { FAULT_RESOURCES } from '../machine-fault-error.js';
import { ProtocolError } from './protocol-error.js';
import { workerRoleSchema, type WorkerRole } from '../worker-role.js';

/**
 * Schemas of worker protocol version 1 (docs/worker-protocol.md). Worker → parent messages arrive
 * on fd 3, one JSON object per line; parent → worker requests go to the worker's stdin.
 *
 * Longer than convention 4's 300 lines: this file is the protocol's contract, every message the
 * worker may write, in the order docs/worker-protocol.md gives them, so that a change to the
 * protocol is one diff here beside the page's; what reads the messages lives elsewhere.
 */
export const PROTOCOL_VERSION = 1;

/** Stages of each role, in the order the worker runs them. */
export const ROLE_STAGES = {
  reference: ['reference', 'baseline', 'judge'],
  candidate: ['build', 'load', 'correctness', 'timing'],
} as const satisfies Record<WorkerRole, readonly string[]>;

export const STAGES = [...ROLE_STAGES.reference, ...ROLE_STAGES.candidate] as const;
export const stageSchema = z.enum(STAGES);
export type Stage = z.infer<typeof stageSchema>;

const version = z.literal(PROTOCOL_VERSION);
const seed = z.number().int().nonnegative();
/** A time in milliseconds: finite and not negative. */
const milliseconds = z.number().finite().nonnegative();
/** An error figure; `null` where it does not exist (no tensor leaves, NaN in the output). */
const errorFigure = z.number().nullable().optional();

/** What the worker reports about the machine it runs on, sent in `hello`: the result's `environment`. */
export type WorkerEnvironment = Environment;

export const helloMessageSchema = z.object({
  v: version,
  type: z.literal('hello'),
  role: workerRoleSchema,
  pid: z.number().int().positive(),
  environment: environmentSchema,
});

/** A process's memory peaks during a stage, in bytes (null where the worker cannot read them). */
export const stageMemorySchema = z.object({
  device_peak_bytes: z.number().int().nonnegative().nullable(),
  /** The tensors' own peak (the allocator's allocated bytes; `device_peak_bytes` adds its cache). */
  device_allocated_peak_bytes: z.number().int().nonnegative().nullable().optional(),
  host_peak_bytes: z.number().int().nonnegative().nullable(),
});
export type StageMemory = z.infer<typeof stageMemorySchema>;

export const stageMessageSchema = z
  .object({
    v: version,
    type: z.literal('stage'),
    stage: stageSchema,
    status: z.enum(['start', 'end']),
    duration_ms: milliseconds.optional(),
    memory: stageMemorySchema.optional(),
  })
  .refine((message) => message.status === 'start' || message.duration_ms !== undefined, {
    message: 'a stage `end` message needs `duration_ms`',
    path: ['duration_ms'],
  });

/**
 * Verdicts a `failure` may carry. The protocol names compile_error, runtime_error, invalid_input
 * and crashed; the other non-correct verdicts are accepted too, so a worker guard can reject.
 */
export const FAILURE_KINDS = [
  'compile_error',
  'runtime_error',
  'invalid_input',
  'crashed',
  'rejected',
  'incorrect',
  'timeout',
] as const satisfies readonly Verdict[];

export const failureMessageSchema = z.object({
  v: version,
  type: z.literal('failure'),
  stage: stageSchema,
  kind: z.enum(FAILURE_KINDS),
  check: z.string().min(1),
  message: z.string().min(1),
  compiler_output: z.string().nullable().optional(),
  traceback: z.string().nullable().optional(),
});

/** What ran out when the machine, not the candidate, ended the evaluation (docs/worker-protocol.md, "Faults"). */
export type FaultResource = (typeof FAULT_RESOURCES)[number];

/** The machine could not evaluate: never a verdict (docs/spec.md section 3). */
export const faultMessageSchema = z.object({
  v: version,
  type: z.literal('fault'),
  stage: stageSchema.nullable(),
  resource: z.enum(FAULT_RESOURCES),
  message: z.string().min(1),
  traceback: z.string().nullable().optional(),
  memory: z.record(z.string(), z.number().nullable()).nullable().optional(),
});

export const referenceTrialSchema = z.object({
  seed,
  input_digest: z.string(),
  output: z.string(),
  /**
   * How long the reference took for this trial in the run's precision, by its own clock: from
   * drawing the inputs to the forward's return (`trial_ms`), and the forward alone (`forward_ms`).
   * The parent sizes the candidate's stage limits by them (docs/sizes.md, "Stage limits"). Absent
   * from workers older than these fields.
   */
  trial_ms: milliseconds.optional(),
  forward_ms: milliseconds.optional(),
});

/**
 * The tolerance the reference role chose for the run from its output's dtype (the profile's, or
 * the problem's declaration where the request let it win), which the parent's judge requests use.
 */
export const chosenToleranceSchema = z.object({
  atol: z.number().nonnegative(),
  rtol: z.number().nonnegative(),
  source: z.enum(['profile', 'problem']),
  dtype: z.string().nullable(),
});

export const referenceReadyMessageSchema = z.object({
  v: version,
  type: z.literal('reference-ready'),
  trials: z.array(referenceTrialSchema),
  /** Present when the request carried `atol`/`rtol`. */
  tolerance: chosenToleranceSchema.optional(),
});

/**
 * cuda: the spin kernel held ahead of each timed call's flush (ms; 0 without one) and the timed
 * calls whose launch outran it and the flush (docs/timing.md).
 */
const holdFields = {
  hold_ms: z.number().nonnegative().optional(),
  exposed_calls: z.number().int().nonnegative().optional(),
};

/**
 * One baseline's raw call times, or why it could not be timed. `wall_ms`: host-inclusive time of
 * each timed call; `batch_ms`: per-call time of each of the reference's own batches of
 * back-to-back calls (docs/timing.md); `budget_stopped`: the time budget ended the timed calls
 * early. Entries cached before these fields existed lack them.
 */
export const baselineEntrySchema = z.union([
  z.object({
    times_ms: z.array(milliseconds).min(1),
    wall_ms: z.array(milliseconds).optional(),
    batch_ms: z.array(milliseconds).optional(),
    warmup_calls: z.number().int().nonnegative().optional(),
    budget_stopped: z.boolean().optional(),
    ...holdFields,
  }),
  z.object({ error: z.string().min(1) }),
]);
export type BaselineEntry = z.infer<typeof baselineEntrySchema>;

/** An entry that was not asked for is null. */
export const baselineMessageSchema = z.object({
  v: version,
  type: z.literal('baseline'),
  eager: baselineEntrySchema.nullable(),
  compile: baselineEntrySchema.nullable(),
});

export const TRIAL_CHECKS = [
  'mismatch',
  /** A mismatch whose error against the float64 twin is of the size narrower arithmetic gives (worker tolerance/precision_loss.py): `incorrect`. */
  'precision-loss',
  'shape',
  'dtype',
  'structure',
  'nan',
  'missing-output',
  'input-mutation',
  'degenerate-output',
  'scale-aware-mismatch',
  /** A wrong output on the stressed correctness trial, whose inputs are scaled and shifted (worker problem/stress.py): `incorrect`. */
  'stressed-input',
  'handover',
  'handover-window',
] as const;
export type TrialCheck = (typeof TRIAL_CHECKS)[number];

export const judgedTrialSchema = z.object({
  seed,
  passed: z.boolean(),
  check: z.enum(TRIAL_CHECKS).nullable(),
  message: z.string().nullable().optional(),
  max_abs_error: errorFigure,
  max_rel_error: errorFigure,
  mismatch_count: z.number().int().nonnegative().nullable().optional(),
  numel: z.number().int().nonnegative().nullable().optional(),
  fp64_max_abs_error: errorFigure,
  fp64_max_rel_error: errorFigure,
  /** The dtype of the twin the `fp64_*` errors were measured against (`float32` where float64 could not run); null without one. */
  high_precision_dtype: z.enum(['float64', 'float32']).nullable().optional(),
  input_mutated: z.boolean().nullable().optional(),
  input_seed: seed.nullable().optional(),
  variant: z.record(z.string(), z.number()).nullable().optional(),
  scale_aware: z.record(z.string(), z.unknown()).nullable().optional(),
  first_mismatch: firstMismatchSchema.nullable().optional(),
});
export type JudgedTrial = z.infer<typeof judgedTrialSchema>;

export const judgementMessageSchema = z.object({
  v: version,
  type: z.literal('judgement'),
  passed: z.boolean(),
  degenerate: z.boolean().optional(),
  trials: z.array(judgedTrialSchema),
});

/** The static guard's findings on the candidate's sources, notes included (src/core/guard-report.ts). */
export const guardMessageSchema = z.object({
  v: version,
  type: z.literal('guard'),
  policy: z.string(),
  findings: z.array(guardFindingSchema),
});

/** Outcomes of the run-time checks of a stage (informational: a failed check is a `failure`). */
export const guardChecksMessageSchema = z.object({
  v: version,
  type: z.literal('guard-checks'),
  stage: z.string(),
  checks: z.array(guardCheckSchema),
});

/** Whether trivial outputs pass the problem's tolerance (docs/hacks.md #12). */
export const auditMessageSchema = toleranceAuditSchema.extend({
  v: version,
  type: z.literal('audit'),
});

/** Bytes and FLOPs of the reference, for the speed-of-light bound (docs/hacks.md #16). */
export const rooflineMessageSchema = z
  .object({
    v: version,
    type: z.literal('roofline'),
    bytes: z.number().nonnegative().nullable(),
    flops: z.number().nonnegative().nullable(),
    lower_bound_ms: z.number().nonnegative().nullable().optional(),
    error: z.string().nullable().optional(),
  })
  .catchall(z.unknown());

/** Where the traced correctness call's time went, from the candidate role (worker attribution.py). */
export const attributionMessageSchema = z
  .object({
    v: version,
    type: z.literal('attribution'),
    where: z.string().optional(),
    measured: z.enum(['device', 'host']),
    own_share: z.number().min(0).max(1).nullable(),
    by_origin_ms: z.object({ own: z.number().nonnegative(), library: z.number().nonnegative(), torch: z.number().nonnegative() }),
    /** `compute`: the guard counts it as PyTorch doing the work (not glue, not scalar bookkeeping). */
    torch_ops: z.array(z.object({ op: z.string(), ms: z.number().nonnegative(), compute: z.boolean().optional() }).catchall(z.unknown())),
    notes: z.array(z.string()).optional(),
    unavailable: z.string().nullable(),
  })
  .catchall(z.unknown());

/** The PyTorch operators the reference's own forward runs (worker reference_operators.py). */
export const referenceOpsMessageSchema = z
  .object({
    v: version,
    type: z.literal('reference-ops'),
    ops: z.array(z.object({ op: z.string(), calls: z.number().int().nonnegative().optional() }).catchall(z.unknown())),
    unavailable: z.string().nullable(),
  })
  .catchall(z.unknown());

/** The build's per-kernel resources, SASS and PTX (src/core/build-info.ts); extra fields are kept. */
export const buildInfoMessageSchema = buildInfoSchema.extend({
  v: version,
  type: z.literal('build-info'),
});

/** The id a handed-over output is named by (`correctness-0`, `timed-57`, `batch-0-3`, …). */
const handoverId = z.string().min(1).max(64);

/** A handed-over output and the digest of the inputs after the call that produced it. */
export const savedOutputSchema = z.object({
  seed,
  id: handoverId,
  input_digest: z.string(),
});
export type SavedOutput = z.infer<typeof savedOutputSchema>;

/** A generalisation trial's output (a variant of the problem's constants); `error` when it raised. */
export const generalisationOutputSchema = z
  .object({
    seed,
    variant: z.record(z.string(), z.number()),
    id: handoverId.nullable(),
    input_digest: z.string().nullable().optional(),
    error: z.string().nullable().optional(),
  })
  .catchall(z.unknown());
export type GeneralisationOutput = z.infer<typeof generalisationOutputSchema>;

export const correctnessOutputsMessageSchema = z.object({
  v: version,
  type: z.literal('correctness-outputs'),
  outputs: z.array(savedOutputSchema),
  generalisation: z.array(generalisationOutputSchema).optional(),
});

/**
 * One output handed to the judge the moment its call returned (docs/worker-protocol.md, "The output
 * hand-over"): its identity, and its header (skeleton, leaf descriptions, one entry per leaf, an IPC
 * handle on cuda) as the candidate describes it. The header is the candidate's word: the parent
 * passes it on untouched and the judge checks it against the reference's own output. The worker
 * waits for `handover-send` (write the bytes into the pipe), `handover-done` or `stop`.
 */
export const handoverMessageSchema = z.object({
  v: version,
  type: z.literal('handover'),
  output: z
    .object({
      id: handoverId,
      seed,
      input_digest: z.string().nullable().optional(),
      input_seed: seed.optional(),
      variant: z.record(z.string(), z.number()).optional(),
      call: z.number().int().nonnegative().optional(),
      skeleton: z.unknown(),
      leaf_info: z.unknown(),
      leaves: z.unknown(),
      ipc: z.unknown(),
    })
    .strict(),
});

/**
 * The judge checked a hand-over's header and waits for the output: its descriptor on the hand-over
 * socket (`transport: 'descriptor'`) or its bytes on the pipe. The parent relays it as `handover-send`.
 */
export const handoverReadyMessageSchema = z.object({
  v: version,
  type: z.literal('handover-ready'),
  id: handoverId,
  transport: z.literal('descriptor').optional(),
});

/** The judge holds its own copy of a handed-over output (`transport`: how the bytes came). */
export const handoverReceivedMessageSchema = z.object({
  v: version,
  type: z.literal('handover-received'),
  id: handoverId,
  transport: z.enum(['cuda-ipc', 'pipe', 'none']),
  bytes: z.number().int().nonnegative(),
  receive_ms: milliseconds,
  ipc_error: z.string().nullable().optional(),
});

export const timedSampleSchema = z.object({
  id: handoverId,
  call: z.number().int().nonnegative(),
  seed,
  input_seed: seed.optional(),
  input_digest: z.string().optional(),
});

/** `--cross-check`: the candidate timed a second way in its own process (docs/timing.md). */
export const crossCheckSchema = z.object({
  method: z.string().min(1),
  times_ms: z.array(milliseconds).min(1),
  /** cuda: the kernels' own durations per call (CUPTI), or why they could not be had. */
  kernels: z
    .object({ method: z.string().min(1), times_ms: z.array(milliseconds).min(1).optional(), unavailable: z.string().optional() })
    .refine((kernels) => (kernels.times_ms === undefined) !== (kernels.unavailable === undefined), 'either times_ms or unavailable')
    .optional(),
});

/**
 * The timed calls' raw times, as the candidate's process measured them (never believed alone:
 * docs/timing.md), the outputs the parent asked it to keep, and `--cross-check`'s figures.
 */
export const timingMessageSchema = z.object({
  v: version,
  type: z.literal('timing'),
  times_ms: z.array(milliseconds).min(1),
  wall_ms: z.array(milliseconds).optional(),
  gap_ms: z.array(z.number().finite()).optional(),
  samples: z.array(timedSampleSchema),
  contents_per_model: z.number().int().positive().optional(),
  warmup_calls: z.number().int().nonnegative().optional(),
  ...holdFields,
  cross_check: crossCheckSchema.optional(),
});

/** A warm-up or timed call has returned and passed its checks; the worker waits for `step`. */
export const calledMessageSchema = z.object({
  v: version,
  type: z.literal('called'),
  phase: z.enum(['warmup', 'timed']),
  index: z.number().int().nonnegative(),
});

/** A trusted batch's inputs are ready; the worker waits for `go`. */
export const batchReadyMessageSchema = z.object({
  v: version,
  type: z.literal('batch-ready'),
  batch: z.number().int().nonnegative(),
  calls: z.number().int().positive(),
});

/** The batch's calls ran and the device was synchronized (the parent's clock stops here). */
export const batchDoneMessageSchema = z.object({
  v: version,
  type: z.literal('batch-done'),
  batch: z.number().int().nonnegative(),
});

/** The batch outputs the parent named in `batch-keep`, saved like timed samples. */
export const batchOutputsMessageSchema = z.object({
  v: version,
  type: z.literal('batch-outputs'),
  batch: z.number().int().nonnegative(),
  samples: z.array(timedSampleSchema),
});

/** The reference role's answer to `ping` (the parent measures the channel's round trip). */
export const pongMessageSchema = z.object({ v: version, type: z.literal('pong') });

/** The reference role's answer to `anchor`: eager re-timed now. */
export const anchorMessageSchema = z.object({
  v: version,
  type: z.literal('anchor'),
  eager: baselineEntrySchema,
});

/**
 * The candidate's build stage is over and it waits for `continue` (sent once the device is held)
 * or `stop`: written only when the request had `await_device: true`. `cache_hit` is true when no
 * shared object was compiled or linked by this build (all predate the stage), false when one was,
 * null when the candidate built no extension.
 */
export const builtMessageSchema = z
  .object({
    v: version,
    type: z.literal('built'),
    cache_hit: z.boolean().nullable().optional(),
  })
  .catchall(z.unknown());

/** Every message a worker may write on fd 3. */
export const workerMessageSchema = z.discriminatedUnion('type', [
  helloMessageSchema,
  stageMessageSchema,
  failureMessageSchema,
  faultMessageSchema,
  referenceReadyMessageSchema,
  baselineMessageSchema,
  judgementMessageSchema,
  buildInfoMessageSchema,
  builtMessageSchema,
  correctnessOutputsMessageSchema,
  handoverMessageSchema,
  handoverReadyMessageSchema,
  handoverReceivedMessageSchema,
  timingMessageSchema,
  calledMessageSchema,
  batchReadyMessageSchema,
  batchDoneMessageSchema,
  batchOutputsMessageSchema,
  pongMessageSchema,
  anchorMessageSchema,
  guardMessageSchema,
  guardChecksMessageSchema,
  auditMessageSchema,
  rooflineMessageSchema,
  attributionMessageSchema,
  referenceOpsMessageSchema,
]);
export type WorkerMessage = z.infer<typeof workerMessageSchema>;
export type WorkerMessageType = WorkerMessage['type'];
export type MessageOfType<T extends WorkerMessageType> = Extract<WorkerMessage, { type: T }>;
export type HandedOutput = MessageOfType<'handover'>['output'];
export type TimedSample = z.infer<typeof timedSampleSchema>;
export type CrossCheckMessage = z.infer<typeof crossCheckSchema>;

const MESSAGE_TYPES = new Set<string>(workerMessageSchema.options.map((option) => option.shape.type.value));

/** Longest line quoted back in a protocol error, in characters. */
const QUOTE_LIMIT = 120;

function quote(line: string): string {
  return line.length > QUOTE_LIMIT ? `${line.slice(0, QUOTE_LIMIT)}…` : line;
}

/**
 * Parses one fd-3 line. Never throws: a line that is not JSON, has another protocol version, an
 * unknown `type` or a malformed body comes back as a {@link ProtocolError}.
 */
export function parseWorkerMessage(line: string, role?: WorkerRole): { ok: true; message: WorkerMessage } | { ok: false; error: ProtocolError } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (cause) {
    return failed(`the line is not JSON: \`${quote(line)}\``, line, role, cause);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return failed(`the line is not a JSON object: \`${quote(line)}\``, line, role);
  }
  const record = value as Record<string, unknown>;
  if (record.v !== PROTOCOL_VERSION) {
    return failed(`expected protocol version 1, got \`${JSON.stringify(record.v)}\``, line, role);
  }
  if (typeof record.type !== 'string' || !MESSAGE_TYPES.has(record.type)) {
    return failed(`unknown message type \`${JSON.stringify(record.type)}\``, line, role);
  }
  const parsed = workerMessageSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at \`${issue.path.join('.')}\`` : '';
    return failed(`malformed \`${record.type}\` message${where}: ${issue?.message ?? 'invalid'}`, line, role, parsed.error);
  }
  return { ok: true, message: parsed.data };
}

function failed(reason: string, line: string, role: WorkerRole | undefined, cause?: unknown): { ok: false; error: ProtocolError } {
  return { ok: false, error: new ProtocolError(reason, { line: quote(line), role, cause }) };
}
