import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import { StoreReferenceError } from '../errors/store-reference-error.js';
import { StoreValidationError } from '../errors/store-validation-error.js';
import type { ListRunsOptions } from '../run-store.js';
import type { StoreDatabase } from './sqlite-database-schema.js';
import { toRun } from './sqlite-row-mappers.js';
import { insertEvent } from './sqlite-write-helpers.js';
import type { createRunInputSchema, updateRunStatusSchema } from '../store-input-schemas.js';
import type { Run } from '../store-records.js';

/** Run work of the SQLite store; writes run inside the caller's transaction. */

type CreateRun = z.infer<typeof createRunInputSchema>;
type StatusChange = z.infer<typeof updateRunStatusSchema>;

/** A run id a person can type and sort by: `20261202-143005-a1b2c3` (UTC start time, random suffix). */
function createRunId(startedAt: Date, randomHex: string): string {
  const stamp = startedAt.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomHex}`;
}

/** Runs matching `filter`, most recently started first, each with its problems in order. */
export async function selectRuns(db: Kysely<StoreDatabase>, filter: ListRunsOptions & { ids?: string[] }): Promise<Run[]> {
  let query = db.selectFrom('runs').selectAll().orderBy('started_at', 'desc').orderBy('id', 'desc');
  if (filter.ids) query = query.where('id', 'in', filter.ids);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.limit !== undefined) query = query.limit(filter.limit);
  const rows = await query.execute();
  if (rows.length === 0) return [];
  const links = await db
    .selectFrom('run_problems')
    .select(['run_id', 'problem_hash'])
    .where(
      'run_id',
      'in',
      rows.map((row) => row.id),
    )
    .orderBy('position')
    .execute();
  return rows.map((row) =>
    toRun(
      row,
      links.filter((link) => link.run_id === row.id).map((link) => link.problem_hash),
    ),
  );
}

/** Inserts the run, its problem list and its `run-created` event. */
export async function insertRun(trx: Kysely<StoreDatabase>, run: CreateRun, at: string): Promise<Run> {
  const id = run.id ?? createRunId(new Date(at), randomBytes(3).toString('hex'));
  if (await trx.selectFrom('runs').select('id').where('id', '=', id).executeTakeFirst()) {
    throw new StoreValidationError('run.id', `a run \`${id}\` already exists`);
  }
  const row = await trx
    .insertInto('runs')
    .values({
      id,
      status: 'running',
      strategy: run.strategy,
      model: run.model,
      config_json: JSON.stringify(run.config),
      error: null,
      started_at: at,
      updated_at: at,
      finished_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  for (const [position, hash] of run.problemHashes.entries()) {
    if (!(await trx.selectFrom('problems').select('hash').where('hash', '=', hash).executeTakeFirst())) {
      throw new StoreReferenceError('problem', hash, 'in the store: store it with upsertProblem first');
    }
    await trx.insertInto('run_problems').values({ run_id: id, problem_hash: hash, position }).execute();
  }
  const payload = { strategy: run.strategy, model: run.model, problems: run.problemHashes.length };
  await insertEvent(trx, { runId: id, problemHash: null, type: 'run-created', payload, at });
  return toRun(row, run.problemHashes);
}

/** Sets the status (stamping `finishedAt` for `finished` and `failed`) and records `run-<status>`. */
export async function changeRunStatus(trx: Kysely<StoreDatabase>, runId: string, change: StatusChange, at: string): Promise<Run> {
  const before = await trx.selectFrom('runs').select('status').where('id', '=', runId).executeTakeFirst();
  if (!before) throw new StoreReferenceError('run', runId);
  const ended = change.status === 'finished' || change.status === 'failed';
  const error = change.status === 'failed' ? (change.error ?? null) : null;
  await trx
    .updateTable('runs')
    .set({ status: change.status, error, updated_at: at, finished_at: ended ? at : null })
    .where('id', '=', runId)
    .execute();
  const type = change.status === 'running' ? 'run-resumed' : `run-${change.status}`;
  await insertEvent(trx, { runId, problemHash: null, type, payload: { from: before.status, error }, at });
  const [run] = await selectRuns(trx, { ids: [runId] });
  return run as Run;
}
