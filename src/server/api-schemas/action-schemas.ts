import { z } from 'zod';
import { runStatusSchema } from '../../store/store-records.js';
import { problemHashSchema } from './common-schemas.js';
import { candidateNodeSchema } from './problem-schemas.js';
import { actionSchema, ideaSchema } from './record-schemas.js';

/** Request bodies and answers of the routes through which a person steps in. */

const noteSchema = z.string().trim().max(10_000, 'expected a note of at most 10000 characters');

export const hintBodySchema = z.object({
  note: noteSchema.min(1, 'expected `note` to hold the hint text, got an empty string'),
  /** The problem the hint is for; leave it out for a hint to every problem of the run. */
  problemHash: problemHashSchema.optional(),
});

export const optionalNoteBodySchema = z.object({ note: noteSchema.optional() }).default({});

export const resumeBodySchema = z
  .object({
    /** Resume a run that still says `running` (its process died without a word). */
    force: z.boolean().default(false),
  })
  .default({ force: false });

export const editBodySchema = z.object({
  source: z.string().min(1, 'expected `source` to hold the edited candidate file, got an empty string').max(1_000_000, 'expected `source` of at most 1 MB'),
  note: noteSchema.optional(),
});

export const actionResponseSchema = z.object({ action: actionSchema });
export const ideaActionResponseSchema = z.object({ action: actionSchema, idea: ideaSchema });

export const stopResponseSchema = z.object({
  action: actionSchema,
  status: runStatusSchema,
  /** True once the run has left `running`; the search stops between steps, so usually false at first. */
  acknowledged: z.boolean(),
});

export const resumeResponseSchema = z.object({
  action: actionSchema,
  /** Process id of the detached `kforge optimize --resume`. */
  pid: z.number().int().nullable(),
  /** Where its output goes. */
  logPath: z.string(),
});

export const editResponseSchema = z.object({
  action: actionSchema,
  candidate: candidateNodeSchema,
});
