import { z } from 'zod';
import { backendSchema, precisionSchema } from '../../core/verdict.js';
import { runStatusSchema } from '../../store/store-records.js';
import { actionSchema, ideaSchema, problemSummarySchema, runEventSchema, runTotalsSchema } from './record-schemas.js';

/** A problem of a run as the run pages show it: the store's summary plus where it sits in a suite. */
export const runProblemSchema = problemSummarySchema.extend({
  /** `level1`, `level2`… from the problem's path or name; `other` when neither says. */
  level: z.string(),
  path: z.string().nullable(),
  /** The candidate a person accepted for this problem (the latest accept), else null. */
  acceptedCandidateId: z.number().int().nullable(),
});

/** One run in the list: everything but its full configuration. */
export const runListItemSchema = z.object({
  id: z.string(),
  status: runStatusSchema,
  strategy: z.string(),
  model: z.string(),
  /** From the run's stored plan; null when the run was not made by `kforge optimize`. */
  backend: backendSchema.nullable(),
  precision: precisionSchema.nullable(),
  error: z.string().nullable(),
  startedAt: z.string(),
  updatedAt: z.string(),
  finishedAt: z.string().nullable(),
  problems: z.array(runProblemSchema),
  totals: runTotalsSchema,
  /** A `stop` was recorded and the run has not yet acknowledged it by leaving `running`. */
  stopPending: z.boolean(),
});

export const runListSchema = z.object({
  store: z.string(),
  runs: z.array(runListItemSchema),
});

export const runDetailSchema = z.object({
  run: runListItemSchema.extend({
    config: z.record(z.string(), z.unknown()),
    /** Whether `resume` can restart it: its config is an optimize plan this version reads. */
    resumable: z.boolean(),
  }),
  actions: z.array(actionSchema),
  ideas: z.array(ideaSchema),
  /** The newest events, oldest first (the stream sends the rest). */
  recentEvents: z.array(runEventSchema),
});

export const runEventsSchema = z.object({ events: z.array(runEventSchema) });
export const runEventsQuerySchema = z.object({
  afterId: z.coerce.number().int().nonnegative().optional(),
  limit: z.coerce.number().int().positive().max(1000).default(200),
});
