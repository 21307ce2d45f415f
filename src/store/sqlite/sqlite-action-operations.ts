import type { Kysely } from 'kysely';
import type { z } from 'zod';
import { StoreValidationError } from '../errors/store-validation-error.js';
import type { StoreDatabase } from './sqlite-database-schema.js';
import { toAction } from './sqlite-row-mappers.js';
import { candidateInRun, ideaInRun, insertEvent, requireRunProblem, touchRun } from './sqlite-write-helpers.js';
import type { recordActionInputSchema } from '../store-input-schemas.js';
import type { Action } from '../store-records.js';

/** Action work of the SQLite store; writes run inside the caller's transaction. */

type RecordAction = z.infer<typeof recordActionInputSchema>;

/**
 * Checks that the action's candidate or idea belongs to its run, applies `pin-idea` / `drop-idea`
 * to the idea, and returns the problem the action concerns (null for run-wide actions).
 */
async function prepareAction(trx: Kysely<StoreDatabase>, action: RecordAction, at: string): Promise<string | null> {
  let problemHash = action.problemHash ?? null;
  const adopt = (hash: string, from: string): void => {
    if (problemHash !== null && problemHash !== hash) {
      throw new StoreValidationError('action.problemHash', `does not match the problem of the ${from}`);
    }
    problemHash = hash;
  };
  if (action.candidateId) adopt((await candidateInRun(trx, action.candidateId, action.runId, 'the action target')).problem_hash, 'candidate');
  if (action.ideaId) adopt((await ideaInRun(trx, action.ideaId, action.runId)).problem_hash, 'idea');
  if (problemHash !== null) await requireRunProblem(trx, action.runId, problemHash);
  if (action.ideaId && (action.type === 'pin-idea' || action.type === 'drop-idea')) {
    const status = action.type === 'pin-idea' ? 'pinned' : 'dropped';
    await trx.updateTable('ideas').set({ status, updated_at: at }).where('id', '=', action.ideaId).execute();
  }
  return problemHash;
}

/** Inserts the action with its `action-recorded` event, after {@link prepareAction}. */
export async function insertAction(trx: Kysely<StoreDatabase>, action: RecordAction, at: string): Promise<Action> {
  await touchRun(trx, action.runId, at);
  const problemHash = await prepareAction(trx, action, at);
  const row = await trx
    .insertInto('actions')
    .values({
      run_id: action.runId,
      problem_hash: problemHash,
      type: action.type,
      candidate_id: action.candidateId ?? null,
      idea_id: action.ideaId ?? null,
      note: action.note ?? null,
      created_at: at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await insertEvent(trx, { runId: action.runId, problemHash, type: 'action-recorded', payload: { actionId: row.id, type: action.type }, at });
  return toAction(row);
}
