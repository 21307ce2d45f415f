import { sql, type Kysely, type Selectable } from 'kysely';
import type { z } from 'zod';
import { sha256Hex } from '../content-hash.js';
import { StoreReferenceError } from '../errors/store-reference-error.js';
import { StoreValidationError } from '../errors/store-validation-error.js';
import type { RecordEvaluationOutcome } from '../run-store.js';
import type { CandidatesTable, StoreDatabase } from './sqlite-database-schema.js';
import { toCandidate, toEvaluation } from './sqlite-row-mappers.js';
import { candidateInRun, ideaInRun, insertEvent, requireRunProblem, touchRun } from './sqlite-write-helpers.js';
import type { addCandidateInputSchema, recordEvaluationInputSchema } from '../store-input-schemas.js';
import type { Candidate, CandidateWithEvaluation, Evaluation } from '../store-records.js';

/** Candidate and evaluation work of the SQLite store; writes run inside the caller's transaction. */

type AddCandidate = z.infer<typeof addCandidateInputSchema>;
type RecordEvaluation = z.infer<typeof recordEvaluationInputSchema>;

export async function insertCandidate(trx: Kysely<StoreDatabase>, input: AddCandidate, at: string): Promise<Candidate> {
  await touchRun(trx, input.runId, at);
  await requireRunProblem(trx, input.runId, input.problemHash);
  if (input.parentId) {
    const parent = await candidateInRun(trx, input.parentId, input.runId, 'the parent');
    if (parent.problem_hash !== input.problemHash) {
      throw new StoreValidationError('candidate.parentId', `candidate ${input.parentId} belongs to another problem`);
    }
  }
  let ideaLabel: string | null = null;
  if (input.ideaId) {
    const idea = await ideaInRun(trx, input.ideaId, input.runId);
    if (idea.problem_hash !== input.problemHash) {
      throw new StoreValidationError('candidate.ideaId', `idea ${input.ideaId} belongs to another problem`);
    }
    ideaLabel = idea.label;
  }
  if (input.modelCallId) {
    const call = await trx.selectFrom('model_calls').select('run_id').where('id', '=', input.modelCallId).executeTakeFirst();
    if (call?.run_id !== input.runId) throw new StoreReferenceError('model call', input.modelCallId, `in run \`${input.runId}\``);
  }
  const row = await trx
    .insertInto('candidates')
    .values({
      run_id: input.runId,
      problem_hash: input.problemHash,
      parent_id: input.parentId ?? null,
      round: input.round,
      idea_id: input.ideaId ?? null,
      idea_label: ideaLabel,
      source: input.source,
      source_hash: sha256Hex(input.source),
      origin: input.origin,
      model_call_id: input.modelCallId ?? null,
      created_at: at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const payload = { candidateId: row.id, parentId: row.parent_id, round: row.round, origin: row.origin, ideaLabel };
  await insertEvent(trx, { runId: input.runId, problemHash: input.problemHash, type: 'candidate-added', payload, at });
  return toCandidate(row);
}

export async function insertEvaluation(trx: Kysely<StoreDatabase>, input: RecordEvaluation, at: string): Promise<RecordEvaluationOutcome> {
  const candidate = await trx.selectFrom('candidates').select(['run_id', 'problem_hash']).where('id', '=', input.candidateId).executeTakeFirst();
  if (!candidate) throw new StoreReferenceError('candidate', input.candidateId);
  const existing = await trx.selectFrom('evaluations').selectAll().where('candidate_id', '=', input.candidateId).executeTakeFirst();
  if (existing) return { evaluation: toEvaluation(existing), created: false };
  if (input.reusedFromEvaluationId) {
    const source = await trx.selectFrom('evaluations').select('id').where('id', '=', input.reusedFromEvaluationId).executeTakeFirst();
    if (!source) throw new StoreReferenceError('evaluation', input.reusedFromEvaluationId, '(reusedFromEvaluationId)');
  }
  await touchRun(trx, candidate.run_id, at);
  const timing = input.result.timing;
  const row = await trx
    .insertInto('evaluations')
    .values({
      candidate_id: input.candidateId,
      run_id: candidate.run_id,
      problem_hash: candidate.problem_hash,
      result_json: JSON.stringify(input.result),
      verdict: input.result.verdict,
      speedup_vs_eager: timing?.speedup_vs_eager ?? null,
      speedup_vs_compile: timing?.speedup_vs_compile ?? null,
      speedup_vs_best: timing?.speedup_vs_best ?? null,
      candidate_median_ms: timing?.candidate_ms.median ?? null,
      gpu_seconds: input.gpuSeconds,
      options_hash: input.optionsHash,
      cache_key: input.cacheKey,
      reused_from_evaluation_id: input.reusedFromEvaluationId ?? null,
      created_at: at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const payload = {
    candidateId: input.candidateId,
    evaluationId: row.id,
    verdict: row.verdict,
    speedupVsBest: row.speedup_vs_best,
    reused: row.reused_from_evaluation_id !== null,
  };
  await insertEvent(trx, { runId: candidate.run_id, problemHash: candidate.problem_hash, type: 'candidate-evaluated', payload, at });
  return { evaluation: toEvaluation(row), created: true };
}

async function withEvaluations(db: Kysely<StoreDatabase>, rows: Selectable<CandidatesTable>[]): Promise<CandidateWithEvaluation[]> {
  if (rows.length === 0) return [];
  const evaluations = await db
    .selectFrom('evaluations')
    .selectAll()
    .where(
      'candidate_id',
      'in',
      rows.map((row) => row.id),
    )
    .execute();
  const byCandidate = new Map(evaluations.map((row) => [row.candidate_id, toEvaluation(row)]));
  return rows.map((row) => ({ ...toCandidate(row), evaluation: byCandidate.get(row.id) }));
}

export async function getCandidate(db: Kysely<StoreDatabase>, id: number): Promise<CandidateWithEvaluation | undefined> {
  const row = await db.selectFrom('candidates').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? (await withEvaluations(db, [row]))[0] : undefined;
}

export async function listCandidates(
  db: Kysely<StoreDatabase>,
  runId: string,
  options: { problemHash?: string; round?: number },
): Promise<CandidateWithEvaluation[]> {
  let query = db.selectFrom('candidates').selectAll().where('run_id', '=', runId).orderBy('id');
  if (options.problemHash) query = query.where('problem_hash', '=', options.problemHash);
  if (options.round !== undefined) query = query.where('round', '=', options.round);
  return withEvaluations(db, await query.execute());
}

export async function candidateLineage(db: Kysely<StoreDatabase>, candidateId: number): Promise<Candidate[]> {
  // A parent always exists before its child, so the chain cannot loop.
  const { rows } = await sql<Selectable<CandidatesTable>>`
    with recursive lineage(id, depth) as (
      select id, 0 from candidates where id = ${candidateId}
      union all
      select candidates.parent_id, lineage.depth + 1
      from candidates join lineage on candidates.id = lineage.id
      where candidates.parent_id is not null
    )
    select candidates.* from lineage join candidates on candidates.id = lineage.id
    order by lineage.depth desc`.execute(db);
  return rows.map(toCandidate);
}

export async function pendingWork(db: Kysely<StoreDatabase>, runId: string): Promise<Candidate[]> {
  const rows = await db
    .selectFrom('candidates')
    .selectAll()
    .where('run_id', '=', runId)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('evaluations').select('evaluations.id').whereRef('evaluations.candidate_id', '=', 'candidates.id'))))
    .orderBy('id')
    .execute();
  return rows.map(toCandidate);
}

export async function findEvaluationByCacheKey(db: Kysely<StoreDatabase>, cacheKey: string): Promise<Evaluation | undefined> {
  const row = await db.selectFrom('evaluations').selectAll().where('cache_key', '=', cacheKey).orderBy('id').limit(1).executeTakeFirst();
  return row && toEvaluation(row);
}
