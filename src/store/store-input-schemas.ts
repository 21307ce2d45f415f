import { z } from 'zod';
import { evaluationResultSchema } from '../core/verdict.js';
import { StoreValidationError } from './errors/store-validation-error.js';
import {
  actionTypeSchema,
  candidateOriginSchema,
  chatMessagesSchema,
  eventTypeSchema,
  ideaStatusSchema,
  jsonObjectSchema,
  runStatusSchema,
} from './store-records.js';

/**
 * zod schemas for the inputs of `RunStore` methods, shared by every backend so that all of them
 * accept and refuse the same things.
 */

const hashSchema = z.string().regex(/^[0-9a-f]{64}$/, 'expected a sha256 hex digest (64 lower-case hex characters)');
const idSchema = z.number().int().positive();
const countSchema = z.number().int().nonnegative();
const nonEmpty = z.string().min(1);

export const runIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'expected letters, digits, `.`, `_` or `-` (at most 64)');

export const createRunInputSchema = z.object({
  id: runIdSchema.optional(),
  strategy: nonEmpty,
  model: nonEmpty,
  config: jsonObjectSchema,
  problemHashes: z
    .array(hashSchema)
    .min(1, 'a run needs at least one problem')
    .refine((hashes) => new Set(hashes).size === hashes.length, 'a problem appears twice'),
});

export const upsertProblemInputSchema = z.object({
  name: nonEmpty,
  source: z.string(),
  path: z.string().nullish(),
});

export const recordModelCallInputSchema = z.object({
  runId: runIdSchema,
  problemHash: hashSchema.nullish(),
  round: countSchema.nullish(),
  model: nonEmpty,
  messages: chatMessagesSchema,
  replyText: z.string().nullish(),
  reasoningText: z.string().nullish(),
  inputTokens: countSchema.nullish(),
  outputTokens: countSchema.nullish(),
  latencyMs: z.number().nonnegative().nullish(),
  costUsd: z.number().nonnegative().nullish(),
  error: z.string().nullish(),
});

export const addCandidateInputSchema = z.object({
  runId: runIdSchema,
  problemHash: hashSchema,
  parentId: idSchema.nullish(),
  round: countSchema,
  ideaId: idSchema.nullish(),
  source: z.string(),
  origin: candidateOriginSchema,
  modelCallId: idSchema.nullish(),
});

export const recordEvaluationInputSchema = z.object({
  candidateId: idSchema,
  result: evaluationResultSchema,
  gpuSeconds: z.number().nonnegative(),
  optionsHash: nonEmpty,
  cacheKey: nonEmpty,
  reusedFromEvaluationId: idSchema.nullish(),
});

export const addIdeaInputSchema = z.object({
  runId: runIdSchema,
  problemHash: hashSchema,
  round: countSchema,
  label: nonEmpty,
  text: nonEmpty,
  status: ideaStatusSchema.optional(),
});

export const updateIdeaInputSchema = z.object({
  label: nonEmpty.optional(),
  text: nonEmpty.optional(),
  status: ideaStatusSchema.optional(),
});

export const recordEventInputSchema = z.object({
  runId: runIdSchema,
  problemHash: hashSchema.nullish(),
  type: eventTypeSchema,
  payload: jsonObjectSchema.optional(),
});

export const recordActionInputSchema = z
  .object({
    runId: runIdSchema,
    type: actionTypeSchema,
    problemHash: hashSchema.nullish(),
    candidateId: idSchema.nullish(),
    ideaId: idSchema.nullish(),
    note: z.string().nullish(),
  })
  .superRefine((action, context) => {
    const need = (field: 'note' | 'ideaId' | 'candidateId'): void => {
      const value = action[field];
      if (value === undefined || value === null || value === '') {
        context.addIssue({ code: 'custom', path: [field], message: `a \`${action.type}\` action needs \`${field}\`` });
      }
    };
    if (action.type === 'hint') need('note');
    if (action.type === 'pin-idea' || action.type === 'drop-idea') need('ideaId');
    if (action.type === 'accept' || action.type === 'edit-candidate') need('candidateId');
  });

export const updateRunStatusSchema = z.object({ status: runStatusSchema, error: z.string().nullish() });

/** Parses `value` with `schema`, turning a zod failure into a {@link StoreValidationError} naming the field. */
export function parseStoreInput<Schema extends z.ZodType>(schema: Schema, value: unknown, what: string): z.infer<Schema> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue && issue.path.length > 0 ? `${what}.${issue.path.join('.')}` : what;
  throw new StoreValidationError(field, issue?.message ?? 'malformed', { cause: parsed.error });
}
