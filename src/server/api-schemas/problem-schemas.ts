import { z } from 'zod';
import { verdictSchema } from '../../core/verdict.js';
import { candidateOriginSchema } from '../../store/store-records.js';
import { actionSchema, ideaSchema } from './record-schemas.js';
import { runProblemSchema } from './run-schemas.js';

/** One candidate as the tree and the plots need it: lineage, verdict and speedups, no source. */
export const candidateNodeSchema = z.object({
  id: z.number().int(),
  parentId: z.number().int().nullable(),
  round: z.number().int(),
  ideaId: z.number().int().nullable(),
  ideaLabel: z.string().nullable(),
  origin: candidateOriginSchema,
  createdAt: z.string(),
  /** Null until evaluated. */
  verdict: verdictSchema.nullable(),
  /** The first reason's sentence, for a tooltip. */
  firstReason: z.string().nullable(),
  speedupVsEager: z.number().nullable(),
  speedupVsCompile: z.number().nullable(),
  speedupVsBest: z.number().nullable(),
  medianMs: z.number().nullable(),
  /** Own kernels' share of the traced correctness call's time (attribution.own_share), null where unmeasured. */
  ownShare: z.number().nullable().optional(),
  evaluatedAt: z.string().nullable(),
  /** The dashboard is evaluating it right now (an edit). */
  evaluating: z.boolean(),
  accepted: z.boolean(),
});
export type CandidateNode = z.infer<typeof candidateNodeSchema>;

export const problemViewSchema = z.object({
  run: z.object({ id: z.string(), status: z.string(), strategy: z.string(), model: z.string(), startedAt: z.string() }),
  problem: runProblemSchema.extend({ source: z.string() }),
  /** In creation order. */
  candidates: z.array(candidateNodeSchema),
  ideas: z.array(ideaSchema),
  /** Hints that go into this problem's prompts: its own and the run-wide ones. */
  hints: z.array(actionSchema),
  /** Every action on this problem, oldest first. */
  actions: z.array(actionSchema),
});
export type ProblemView = z.infer<typeof problemViewSchema>;
