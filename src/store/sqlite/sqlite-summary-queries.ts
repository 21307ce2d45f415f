import type { Kysely } from 'kysely';
import { verdictSchema } from '../../core/verdict.js';
import { StoreDataError } from '../errors/store-data-error.js';
import type { SummaryAggregates } from '../run-summary.js';
import type { StoreDatabase } from './sqlite-database-schema.js';

/** Counts the aggregates behind run summaries for `runIds`, one grouped query per table. */
export async function loadSummaryAggregates(db: Kysely<StoreDatabase>, runIds: readonly string[]): Promise<SummaryAggregates> {
  if (runIds.length === 0) {
    return { problemNames: new Map(), candidateCounts: [], verdictCounts: [], correctEvaluations: [], modelCallTotals: [], eventCounts: [] };
  }
  const ids = [...runIds];
  const names = await db
    .selectFrom('run_problems')
    .innerJoin('problems', 'problems.hash', 'run_problems.problem_hash')
    .select(['problems.hash', 'problems.name'])
    .where('run_problems.run_id', 'in', ids)
    .execute();
  const candidateCounts = await db
    .selectFrom('candidates')
    .select((eb) => ['run_id as runId', 'problem_hash as problemHash', eb.fn.countAll<number>().as('count')])
    .where('run_id', 'in', ids)
    .groupBy(['run_id', 'problem_hash'])
    .execute();
  const verdictCounts = await loadVerdictCounts(db, ids);
  const correctEvaluations = await db
    .selectFrom('evaluations')
    .select([
      'run_id as runId',
      'problem_hash as problemHash',
      'candidate_id as candidateId',
      'speedup_vs_eager as speedupVsEager',
      'speedup_vs_compile as speedupVsCompile',
      'speedup_vs_best as speedupVsBest',
      'candidate_median_ms as candidateMedianMs',
    ])
    .where('run_id', 'in', ids)
    .where('verdict', '=', 'correct')
    .orderBy('candidate_id')
    .execute();
  const modelCallTotals = await loadModelCallTotals(db, ids);
  const eventCounts = await db
    .selectFrom('events')
    .select((eb) => ['run_id as runId', 'problem_hash as problemHash', eb.fn.countAll<number>().as('count')])
    .where('run_id', 'in', ids)
    .groupBy(['run_id', 'problem_hash'])
    .execute();
  return {
    problemNames: new Map(names.map((row) => [row.hash, row.name])),
    candidateCounts,
    verdictCounts,
    correctEvaluations,
    modelCallTotals,
    eventCounts,
  };
}

/** Evaluations per run, problem and verdict, with their device seconds; a verdict the store does not know is a data error. */
async function loadVerdictCounts(db: Kysely<StoreDatabase>, ids: string[]): Promise<SummaryAggregates['verdictCounts']> {
  const verdictRows = await db
    .selectFrom('evaluations')
    .select((eb) => [
      'run_id as runId',
      'problem_hash as problemHash',
      'verdict',
      eb.fn.countAll<number>().as('count'),
      eb.fn.sum<number>('gpu_seconds').as('gpuSeconds'),
    ])
    .where('run_id', 'in', ids)
    .groupBy(['run_id', 'problem_hash', 'verdict'])
    .execute();
  return verdictRows.map((row) => {
    const verdict = verdictSchema.safeParse(row.verdict);
    if (!verdict.success) {
      throw new StoreDataError({ table: 'evaluations', column: 'verdict', rowId: `run ${row.runId}` }, { cause: verdict.error });
    }
    return { ...row, verdict: verdict.data };
  });
}

/** Model calls per run and problem, with their tokens and cost (none counted as 0). */
async function loadModelCallTotals(db: Kysely<StoreDatabase>, ids: string[]): Promise<SummaryAggregates['modelCallTotals']> {
  const modelCallRows = await db
    .selectFrom('model_calls')
    .select((eb) => [
      'run_id as runId',
      'problem_hash as problemHash',
      eb.fn.countAll<number>().as('count'),
      eb.fn.sum<number | null>('input_tokens').as('inputTokens'),
      eb.fn.sum<number | null>('output_tokens').as('outputTokens'),
      eb.fn.sum<number | null>('cost_usd').as('costUsd'),
    ])
    .where('run_id', 'in', ids)
    .groupBy(['run_id', 'problem_hash'])
    .execute();
  return modelCallRows.map((row) => ({
    ...row,
    inputTokens: row.inputTokens ?? 0,
    outputTokens: row.outputTokens ?? 0,
  }));
}
