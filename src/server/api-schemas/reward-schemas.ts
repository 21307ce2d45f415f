import { z } from 'zod';
import { backendChoices, describePerBackend } from '../../backends/registry.js';
import { DEFAULT_REWARD_GUARD_POLICY, GUARD_POLICIES, guardPolicyNameSchema } from '../../core/guard-policy.js';
import { REWARD_BASELINES, REWARD_SHAPING_NAMES, rewardShapingInputSchema } from '../../core/reward-shaping-schema.js';
import { BACKENDS, evaluationResultSchema, PRECISIONS, PRESETS, TOLERANCE_PROFILES, verdictSchema } from '../../core/verdict.js';
import { apiErrorSchema, errorResponses } from './common-schemas.js';

/** Bodies and answers of the reward API (docs/reward.md). */

/** Largest problem or candidate source a request may carry, in bytes of UTF-8. */
export const MAX_REWARD_SOURCE_BYTES = 1024 * 1024;
/** Largest body of `POST /api/reward`, in bytes (a problem and a candidate at their limit, JSON-escaped). */
export const REWARD_BODY_LIMIT_BYTES = 4 * 1024 * 1024;
/** Largest body of `POST /api/reward/batch`, in bytes. */
export const REWARD_BATCH_BODY_LIMIT_BYTES = 64 * 1024 * 1024;
/** Longest warm-up by time a request may ask for, ms (the timing budget caps it lower: docs/timing.md). */
export const MAX_REWARD_WARMUP_MS = 10_000;
/** Most candidates one batch may carry by default. */
export const DEFAULT_REWARD_BATCH_LIMIT = 256;

const source = (field: string) =>
  z
    .string({ error: `expected \`${field}\` to be a string holding a Python file` })
    .refine((text) => Buffer.byteLength(text, 'utf8') <= MAX_REWARD_SOURCE_BYTES, { error: `expected \`${field}\` to be at most 1 MiB of UTF-8` });

const choice = <const T extends readonly [string, ...string[]]>(field: string, values: T) =>
  z.enum(values, { error: (issue) => `expected \`${field}\` to be one of ${values.join(', ')}, got ${JSON.stringify(issue.input)?.slice(0, 80)}` });

/** Unknown fields are refused (a typo such as `perf_trials` would otherwise be ignored silently). */
const unknownFields = (fields: readonly string[]) => ({
  error: (issue: { code?: string; keys?: string[] }) =>
    issue.code === 'unrecognized_keys'
      ? `unknown field${issue.keys?.length === 1 ? '' : 's'} ${issue.keys?.map((key) => `\`${key}\``).join(', ')}: the fields are ${fields.join(', ')}`
      : undefined,
});

const count = (field: string, minimum: number, maximum: number) =>
  z
    .number({ error: `expected \`${field}\` to be an integer from ${minimum} to ${maximum}` })
    .int(`expected \`${field}\` to be an integer from ${minimum} to ${maximum}`)
    .min(minimum, `expected \`${field}\` to be at least ${minimum}`)
    .max(maximum, `expected \`${field}\` to be at most ${maximum}`);

const problemFields = {
  problem: z
    .string()
    .min(1)
    .max(200)
    .describe('a shipped problem (`level1/02_gelu`, see GET /api/reward/problems) or the hash of a problem in the store (64 hex)')
    .optional(),
  problemSource: source('problemSource').describe('the problem file itself (KernelBench format), instead of `problem`').optional(),
  problemName: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'expected `problemName` of letters, digits, `.`, `_` or `-` (at most 100)')
    .describe('name under which an inline `problemSource` is stored (default `inline-<hash>`)')
    .optional(),
};

/** The evaluation options of an `EvaluationRequest` that a reward request may set; the rest are the server's. */
export const rewardEvaluationFields = {
  backend: choice('backend', BACKENDS).describe(`where the candidate runs: ${backendChoices('`')}`),
  precision: choice('precision', PRECISIONS).describe('default fp32').optional(),
  tolerance: choice('tolerance', TOLERANCE_PROFILES).describe('default kernelbench').optional(),
  preset: choice('preset', PRESETS).describe('problem sizes; default `cpu` on the cpu backend, else `gpu`').optional(),
  trials: count('trials', 1, 50).describe('correctness trials, each with fresh seeds; default 5').optional(),
  perfTrials: count('perfTrials', 1, 1000).describe('timed calls; default 100').optional(),
  warmupTrials: count('warmupTrials', 0, 100).describe('untimed calls before timing; default 10').optional(),
  warmupMs: z
    .number({ error: `expected \`warmupMs\` to be a number of milliseconds from 0 to ${MAX_REWARD_WARMUP_MS}` })
    .min(0, 'expected `warmupMs` to be at least 0')
    .max(MAX_REWARD_WARMUP_MS, `expected \`warmupMs\` to be at most ${MAX_REWARD_WARMUP_MS}`)
    .describe(`after \`warmupTrials\`, warm up until this much time has passed (ms); default ${describePerBackend((module) => module.clock.defaultWarmupMs)}`)
    .optional(),
  guardPolicy: guardPolicyNameSchema('guardPolicy')
    .describe(`the guard's policy (${GUARD_POLICIES.join(', ')}); default \`${DEFAULT_REWARD_GUARD_POLICY}\` (docs/reward.md)`)
    .optional(),
  shapes: z.boolean().describe('also check correctness at other problem sizes (reported)').optional(),
  shapesGate: z.boolean().describe('reject a candidate that fails at other sizes (implies `shapes`)').optional(),
  skipTiming: z.boolean().describe('correctness only: the reward is then the correctness part alone').optional(),
  shaping: rewardShapingInputSchema.optional(),
};

function oneProblem(
  value: { problem?: string | undefined; problemSource?: string | undefined },
  context: z.RefinementCtx,
  path: Array<string | number>,
  required: boolean,
): void {
  if (value.problem !== undefined && value.problemSource !== undefined) {
    context.addIssue({ code: 'custom', path: [...path, 'problemSource'], message: 'give either `problem` or `problemSource`, not both' });
  } else if (required && value.problem === undefined && value.problemSource === undefined) {
    context.addIssue({
      code: 'custom',
      path: [...path, 'problem'],
      message: 'expected `problem` (a shipped problem name or a stored problem hash) or `problemSource` (the problem file)',
    });
  }
}

const rewardRequestShape = {
  ...problemFields,
  candidateSource: source('candidateSource').describe('the candidate file: a `ModelNew` module (docs/spec.md section 2)'),
  ...rewardEvaluationFields,
};

export const rewardRequestSchema = z
  .strictObject(rewardRequestShape, unknownFields(Object.keys(rewardRequestShape)))
  .superRefine((body, context) => oneProblem(body, context, [], true));
export type RewardRequestBody = z.infer<typeof rewardRequestSchema>;

const rewardBatchItemShape = { ...problemFields, candidateSource: source('candidateSource') };
export const rewardBatchItemSchema = z.strictObject(rewardBatchItemShape, unknownFields(Object.keys(rewardBatchItemShape)));
export type RewardBatchItem = z.infer<typeof rewardBatchItemSchema>;

/** A batch's options apply to every item; its `problem`/`problemSource` is the default of items that name none. */
export function rewardBatchRequestSchema(maxItems: number) {
  const shape = {
    ...problemFields,
    items: z
      .array(rewardBatchItemSchema)
      .min(1, 'expected `items` to hold at least one candidate')
      .max(maxItems, `expected at most ${maxItems} items in one batch: split it`),
    ...rewardEvaluationFields,
  };
  return z.strictObject(shape, unknownFields(Object.keys(shape))).superRefine((body, context) => {
    oneProblem(body, context, [], false);
    const shared = body.problem !== undefined || body.problemSource !== undefined;
    for (const [index, item] of body.items.entries()) oneProblem(item, context, ['items', index], !shared);
  });
}
export type RewardBatchRequestBody = z.infer<ReturnType<typeof rewardBatchRequestSchema>>;

export const shapedRewardSchema = z.object({
  reward: z.number(),
  name: z.enum(REWARD_SHAPING_NAMES),
  params: z.record(z.string(), z.unknown()).describe("the shaping's parameters with every default filled in"),
  verdict: verdictSchema,
  correctnessReward: z.number(),
  speedReward: z.number(),
  baseline: z.enum(REWARD_BASELINES).nullable(),
  speedup: z.number().nullable(),
  effectiveSpeedup: z.number().nullable().describe('the speedup with the time floored at the speed-of-light bound'),
  tier: z.number().int().nullable(),
  explanation: z.string(),
});

export const REWARD_SOURCES = ['evaluated', 'store', 'in-flight'] as const;

export const rewardResponseSchema = z.object({
  reward: z.number().describe('the shaped reward (docs/reward.md)'),
  shaping: shapedRewardSchema,
  verdict: verdictSchema,
  result: evaluationResultSchema.describe('the full evaluation (docs/spec.md section 6)'),
  cached: z.boolean().describe('true when no new evaluation ran for this request (found in the store, or shared with an identical request in flight)'),
  source: z.enum(REWARD_SOURCES),
  requestHash: z.string().describe('sha256 of problem, candidate, backend and normalised options: the cache key'),
  problemHash: z.string(),
  /** The stored candidate and evaluation (in the problem's `reward-…` run); null when storing failed. */
  candidateId: z.number().int().nullable(),
  evaluationId: z.number().int().nullable(),
});
export type RewardResponse = z.infer<typeof rewardResponseSchema>;

export const rewardBatchResponseSchema = z.object({
  results: z.array(rewardResponseSchema).describe('one per item, in request order'),
  /** Distinct evaluations this batch ran. */
  evaluated: z.number().int(),
  /** Items answered without a new evaluation. */
  cached: z.number().int(),
});
export type RewardBatchResponse = z.infer<typeof rewardBatchResponseSchema>;

export const shippedProblemsResponseSchema = z.object({
  problems: z.array(z.object({ name: z.string().describe('what `problem` takes: `level1/02_gelu`'), hash: z.string(), path: z.string() })),
});

/** Errors the reward routes answer with, for the OpenAPI document. */
export const rewardErrorResponses = {
  ...errorResponses,
  413: apiErrorSchema,
  422: apiErrorSchema.describe(
    'the problem file cannot be evaluated (no `Model`, `get_inputs()` raised: `problem-invalid`; its reference too slow at these sizes for this server: `problem-too-slow`): nothing is scored',
  ),
  429: apiErrorSchema.describe('too many requests wait for an evaluation: retry after `Retry-After` seconds'),
  503: apiErrorSchema.describe('the evaluator failed or the server is stopping: retry after `Retry-After` seconds'),
} as const;
