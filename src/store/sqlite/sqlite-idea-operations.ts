import type { Kysely } from 'kysely';
import type { z } from 'zod';
import { StoreReferenceError } from '../errors/store-reference-error.js';
import type { addIdeaInputSchema, updateIdeaInputSchema } from '../store-input-schemas.js';
import type { Idea } from '../store-records.js';
import type { StoreDatabase } from './sqlite-database-schema.js';
import { toIdea } from './sqlite-row-mappers.js';
import { requireRunProblem, touchRun } from './sqlite-write-helpers.js';

/** Idea work of the SQLite store; each runs inside the caller's transaction and touches the idea's run. */

/** Adds an idea to a problem of its run (`active` unless said otherwise). */
export async function insertIdea(trx: Kysely<StoreDatabase>, idea: z.infer<typeof addIdeaInputSchema>, at: string): Promise<Idea> {
  await touchRun(trx, idea.runId, at);
  await requireRunProblem(trx, idea.runId, idea.problemHash);
  const row = await trx
    .insertInto('ideas')
    .values({
      run_id: idea.runId,
      problem_hash: idea.problemHash,
      round: idea.round,
      label: idea.label,
      text: idea.text,
      status: idea.status ?? 'active',
      created_at: at,
      updated_at: at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toIdea(row);
}

/** Changes an idea; one that does not exist is a {@link StoreReferenceError}. */
export async function updateIdea(trx: Kysely<StoreDatabase>, id: number, change: z.infer<typeof updateIdeaInputSchema>, at: string): Promise<Idea> {
  await touchIdeaRun(trx, id, at);
  const row = await trx
    .updateTable('ideas')
    .set({ ...change, updated_at: at })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toIdea(row);
}

/** Deletes an idea; one that does not exist is a {@link StoreReferenceError}. */
export async function deleteIdea(trx: Kysely<StoreDatabase>, id: number, at: string): Promise<void> {
  await touchIdeaRun(trx, id, at);
  await trx.deleteFrom('ideas').where('id', '=', id).execute();
}

async function touchIdeaRun(trx: Kysely<StoreDatabase>, id: number, at: string): Promise<void> {
  const before = await trx.selectFrom('ideas').select('run_id').where('id', '=', id).executeTakeFirst();
  if (!before) throw new StoreReferenceError('idea', id);
  await touchRun(trx, before.run_id, at);
}
