import type { Kysely, Selectable } from 'kysely';
import { StoreReferenceError } from '../errors/store-reference-error.js';
import type { CandidatesTable, IdeasTable, StoreDatabase } from './sqlite-database-schema.js';
import { toRunEvent } from './sqlite-row-mappers.js';
import type { JsonObject, RunEvent } from '../store-records.js';

/** Steps shared by the SQLite store's writes; each runs inside the caller's transaction. */

/** Marks the run as active at `at`; throws when there is no such run. */
export async function touchRun(trx: Kysely<StoreDatabase>, runId: string, at: string): Promise<void> {
  const result = await trx.updateTable('runs').set({ updated_at: at }).where('id', '=', runId).executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw new StoreReferenceError('run', runId);
}

/** Throws unless `problemHash` is one of the run's problems. */
export async function requireRunProblem(trx: Kysely<StoreDatabase>, runId: string, problemHash: string): Promise<void> {
  const row = await trx
    .selectFrom('run_problems')
    .select('problem_hash')
    .where('run_id', '=', runId)
    .where('problem_hash', '=', problemHash)
    .executeTakeFirst();
  if (!row) throw new StoreReferenceError('problem', problemHash, `among the problems of run \`${runId}\``);
}

export interface EventToInsert {
  runId: string;
  problemHash: string | null;
  type: string;
  payload: JsonObject;
  at: string;
}

export async function insertEvent(trx: Kysely<StoreDatabase>, event: EventToInsert): Promise<RunEvent> {
  const row = await trx
    .insertInto('events')
    .values({
      run_id: event.runId,
      problem_hash: event.problemHash,
      type: event.type,
      payload_json: JSON.stringify(event.payload),
      created_at: event.at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toRunEvent(row);
}

/** The candidate's row; throws unless it exists and belongs to the run (`role` names it in the message). */
export async function candidateInRun(db: Kysely<StoreDatabase>, id: number, runId: string, role: string): Promise<Selectable<CandidatesTable>> {
  const row = await db.selectFrom('candidates').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || row.run_id !== runId) throw new StoreReferenceError('candidate', id, `in run \`${runId}\` (${role})`);
  return row;
}

/** The idea's row; throws unless it exists and belongs to the run. */
export async function ideaInRun(db: Kysely<StoreDatabase>, id: number, runId: string): Promise<Selectable<IdeasTable>> {
  const row = await db.selectFrom('ideas').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || row.run_id !== runId) throw new StoreReferenceError('idea', id, `in run \`${runId}\``);
  return row;
}
