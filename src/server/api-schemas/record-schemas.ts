import { z } from 'zod';
import { verdictSchema } from '../../core/verdict.js';
import { actionTypeSchema, candidateOriginSchema, ideaStatusSchema, runStatusSchema } from '../../store/store-records.js';

/**
 * zod mirrors of the store's records as the API sends them (times are ISO-8601 UTC strings).
 * They document the API in its OpenAPI document and check every response on the way out.
 */

const count = z.number().int().nonnegative();
const nullableNumber = z.number().nullable();

export const problemSummarySchema = z.object({
  problemHash: z.string(),
  name: z.string(),
  candidates: count,
  evaluated: count,
  correct: count,
  correctShare: nullableNumber,
  bestVerdict: verdictSchema.nullable(),
  bestCandidateId: z.number().int().nullable(),
  bestSpeedupVsEager: nullableNumber,
  bestSpeedupVsCompile: nullableNumber,
  bestSpeedupVsBest: nullableNumber,
  bestCandidateMedianMs: nullableNumber,
  modelCalls: count,
  inputTokens: count,
  outputTokens: count,
  costUsd: nullableNumber,
  gpuSeconds: z.number(),
  events: count,
});

export const runTotalsSchema = z.object({
  problems: count,
  problemsSolved: count,
  candidates: count,
  evaluated: count,
  correct: count,
  correctShare: nullableNumber,
  bestSpeedupVsBest: nullableNumber,
  modelCalls: count,
  inputTokens: count,
  outputTokens: count,
  costUsd: nullableNumber,
  gpuSeconds: z.number(),
  events: count,
});

export const actionSchema = z.object({
  id: z.number().int(),
  runId: z.string(),
  problemHash: z.string().nullable(),
  type: actionTypeSchema,
  candidateId: z.number().int().nullable(),
  ideaId: z.number().int().nullable(),
  note: z.string().nullable(),
  createdAt: z.string(),
});

export const ideaSchema = z.object({
  id: z.number().int(),
  runId: z.string(),
  problemHash: z.string(),
  round: count,
  label: z.string(),
  text: z.string(),
  status: ideaStatusSchema,
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const runEventSchema = z.object({
  id: z.number().int(),
  runId: z.string(),
  problemHash: z.string().nullable(),
  type: z.string(),
  payload: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
});

export const runStatusFieldSchema = runStatusSchema;
export const candidateOriginFieldSchema = candidateOriginSchema;
