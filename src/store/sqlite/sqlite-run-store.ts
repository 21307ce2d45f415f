import { sql, type Kysely } from 'kysely';
import { sha256Hex } from '../content-hash.js';
import type * as Store from '../run-store.js';
import { buildRunSummaries } from '../run-summary.js';
import { openSqliteDatabase } from './sqlite-database.js';
import type { StoreDatabase } from './sqlite-database-schema.js';
import { insertAction } from './sqlite-action-operations.js';
import * as candidateOperations from './sqlite-candidate-operations.js';
import * as ideaOperations from './sqlite-idea-operations.js';
import * as runOperations from './sqlite-run-operations.js';
import { toAction, toIdea, toModelCall, toProblem, toRunEvent } from './sqlite-row-mappers.js';
import { loadSummaryAggregates } from './sqlite-summary-queries.js';
import { insertEvent, requireRunProblem, touchRun } from './sqlite-write-helpers.js';
import * as inputs from '../store-input-schemas.js';
import type { Action, Idea, ModelCall, ProblemRecord, Run, RunEvent, RunStatus, RunSummary } from '../store-records.js';

export interface SqliteRunStoreOptions {
  /** Database file, or `:memory:`. */
  path: string;
  /** Refuse to create the file when it does not exist (readers such as `kforge runs`). */
  mustExist?: boolean;
  /** Clock for every stored time. Default: `() => new Date()`. */
  now?: () => Date;
  /** How long a write waits for another process's write, in ms. */
  busyTimeoutMs?: number;
}

/**
 * {@link Store.RunStore} on one SQLite file (better-sqlite3 through kysely). Several processes may
 * share the file: the search writes, the dashboard and `kforge runs` read, WAL lets them do so at
 * once. Each method is one transaction.
 *
 * @example const store = await SqliteRunStore.open({ path: '.kforge/kforge.db' });
 */
export class SqliteRunStore implements Store.RunStore {
  readonly location: string;
  readonly #db: Kysely<StoreDatabase>;
  readonly #now: () => Date;

  private constructor(db: Kysely<StoreDatabase>, location: string, now: () => Date) {
    this.#db = db;
    this.location = location;
    this.#now = now;
  }

  /** Opens or creates the store; see `openSqliteDatabase` for what it refuses. */
  static async open(options: SqliteRunStoreOptions): Promise<SqliteRunStore> {
    const db = await openSqliteDatabase(options);
    return new SqliteRunStore(db, options.path, options.now ?? (() => new Date()));
  }

  /**
   * Runs reads that must agree with each other (a run and its counts) in one deferred
   * transaction: in WAL mode they all see one snapshot, and writers are not blocked.
   */
  #read<T>(work: (db: Kysely<StoreDatabase>) => Promise<T>): Promise<T> {
    return this.#db.connection().execute(async (connection) => {
      await sql`begin`.execute(connection);
      try {
        return await work(connection);
      } finally {
        await sql`commit`.execute(connection);
      }
    });
  }

  /** Runs `work` in one `BEGIN IMMEDIATE` transaction, with the time of the write. */
  #write<T>(work: (trx: Kysely<StoreDatabase>, at: string) => Promise<T>): Promise<T> {
    return this.#db.transaction().execute((trx) => work(trx, this.#now().toISOString()));
  }

  async createRun(input: Store.CreateRunInput): Promise<Run> {
    const run = inputs.parseStoreInput(inputs.createRunInputSchema, input, 'run');
    return this.#write((trx, at) => runOperations.insertRun(trx, run, at));
  }

  async getRun(runId: string): Promise<Run | undefined> {
    return this.#read(async (db) => (await runOperations.selectRuns(db, { ids: [runId] }))[0]);
  }

  async listRuns(options: Store.ListRunsOptions = {}): Promise<RunSummary[]> {
    return this.#read((db) => this.#summaries(db, options));
  }

  async getRunSummary(runId: string): Promise<RunSummary | undefined> {
    return this.#read(async (db) => (await this.#summaries(db, { ids: [runId] }))[0]);
  }

  async #summaries(db: Kysely<StoreDatabase>, filter: Parameters<typeof runOperations.selectRuns>[1]): Promise<RunSummary[]> {
    const runs = await runOperations.selectRuns(db, filter);
    return buildRunSummaries(
      runs,
      await loadSummaryAggregates(
        db,
        runs.map((run) => run.id),
      ),
    );
  }

  async updateRunStatus(runId: string, status: RunStatus, options: { error?: string | null } = {}): Promise<Run> {
    const change = inputs.parseStoreInput(inputs.updateRunStatusSchema, { status, error: options.error }, 'status');
    return this.#write((trx, at) => runOperations.changeRunStatus(trx, runId, change, at));
  }

  async upsertProblem(input: Store.UpsertProblemInput): Promise<ProblemRecord> {
    const problem = inputs.parseStoreInput(inputs.upsertProblemInputSchema, input, 'problem');
    const hash = sha256Hex(problem.source);
    return this.#write(async (trx, at) => {
      await trx
        .insertInto('problems')
        .values({ hash, name: problem.name, source: problem.source, path: problem.path ?? null, created_at: at })
        .onConflict((conflict) => conflict.column('hash').doNothing())
        .execute();
      return toProblem(await trx.selectFrom('problems').selectAll().where('hash', '=', hash).executeTakeFirstOrThrow());
    });
  }

  async getProblem(hash: string): Promise<ProblemRecord | undefined> {
    const row = await this.#db.selectFrom('problems').selectAll().where('hash', '=', hash).executeTakeFirst();
    return row && toProblem(row);
  }

  async listRunProblems(runId: string): Promise<ProblemRecord[]> {
    const rows = await this.#db
      .selectFrom('run_problems')
      .innerJoin('problems', 'problems.hash', 'run_problems.problem_hash')
      .selectAll('problems')
      .where('run_problems.run_id', '=', runId)
      .orderBy('run_problems.position')
      .execute();
    return rows.map(toProblem);
  }

  async recordModelCall(input: Store.RecordModelCallInput): Promise<ModelCall> {
    const call = inputs.parseStoreInput(inputs.recordModelCallInputSchema, input, 'modelCall');
    return this.#write(async (trx, at) => {
      await touchRun(trx, call.runId, at);
      if (call.problemHash) await requireRunProblem(trx, call.runId, call.problemHash);
      const row = await trx
        .insertInto('model_calls')
        .values({
          run_id: call.runId,
          problem_hash: call.problemHash ?? null,
          round: call.round ?? null,
          model: call.model,
          messages_json: JSON.stringify(call.messages),
          reply_text: call.replyText ?? null,
          reasoning_text: call.reasoningText ?? null,
          input_tokens: call.inputTokens ?? null,
          output_tokens: call.outputTokens ?? null,
          latency_ms: call.latencyMs ?? null,
          cost_usd: call.costUsd ?? null,
          error: call.error ?? null,
          created_at: at,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toModelCall(row);
    });
  }

  async getModelCall(id: number): Promise<ModelCall | undefined> {
    const row = await this.#db.selectFrom('model_calls').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toModelCall(row);
  }

  async listModelCalls(runId: string, options: { problemHash?: string } = {}): Promise<ModelCall[]> {
    let query = this.#db.selectFrom('model_calls').selectAll().where('run_id', '=', runId).orderBy('id');
    if (options.problemHash) query = query.where('problem_hash', '=', options.problemHash);
    return (await query.execute()).map(toModelCall);
  }

  async addCandidate(input: Store.AddCandidateInput): Promise<Store.Candidate> {
    const candidate = inputs.parseStoreInput(inputs.addCandidateInputSchema, input, 'candidate');
    return this.#write((trx, at) => candidateOperations.insertCandidate(trx, candidate, at));
  }

  async getCandidate(id: number): Promise<Store.CandidateWithEvaluation | undefined> {
    return this.#read((db) => candidateOperations.getCandidate(db, id));
  }

  async listCandidates(runId: string, options: Store.ListCandidatesOptions = {}): Promise<Store.CandidateWithEvaluation[]> {
    return this.#read((db) => candidateOperations.listCandidates(db, runId, options));
  }

  async candidateLineage(candidateId: number): Promise<Store.Candidate[]> {
    return candidateOperations.candidateLineage(this.#db, candidateId);
  }

  async pendingWork(runId: string): Promise<Store.Candidate[]> {
    return candidateOperations.pendingWork(this.#db, runId);
  }

  async recordEvaluation(input: Store.RecordEvaluationInput): Promise<Store.RecordEvaluationOutcome> {
    const evaluation = inputs.parseStoreInput(inputs.recordEvaluationInputSchema, input, 'evaluation');
    return this.#write((trx, at) => candidateOperations.insertEvaluation(trx, evaluation, at));
  }

  async findEvaluationByCacheKey(cacheKey: string): Promise<Store.Evaluation | undefined> {
    return candidateOperations.findEvaluationByCacheKey(this.#db, cacheKey);
  }

  async addIdea(input: Store.AddIdeaInput): Promise<Idea> {
    const idea = inputs.parseStoreInput(inputs.addIdeaInputSchema, input, 'idea');
    return this.#write((trx, at) => ideaOperations.insertIdea(trx, idea, at));
  }

  async getIdea(id: number): Promise<Idea | undefined> {
    const row = await this.#db.selectFrom('ideas').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toIdea(row);
  }

  async listIdeas(runId: string, options: Store.ListIdeasOptions = {}): Promise<Idea[]> {
    let query = this.#db.selectFrom('ideas').selectAll().where('run_id', '=', runId).orderBy('id');
    if (options.problemHash) query = query.where('problem_hash', '=', options.problemHash);
    if (options.status) query = query.where('status', '=', options.status);
    return (await query.execute()).map(toIdea);
  }

  async updateIdea(id: number, changes: Store.UpdateIdeaInput): Promise<Idea> {
    const change = inputs.parseStoreInput(inputs.updateIdeaInputSchema, changes, 'idea');
    return this.#write((trx, at) => ideaOperations.updateIdea(trx, id, change, at));
  }

  async deleteIdea(id: number): Promise<void> {
    await this.#write((trx, at) => ideaOperations.deleteIdea(trx, id, at));
  }

  async recordEvent(input: Store.RecordEventInput): Promise<RunEvent> {
    const event = inputs.parseStoreInput(inputs.recordEventInputSchema, input, 'event');
    return this.#write(async (trx, at) => {
      await touchRun(trx, event.runId, at);
      if (event.problemHash) await requireRunProblem(trx, event.runId, event.problemHash);
      const problemHash = event.problemHash ?? null;
      return insertEvent(trx, { runId: event.runId, problemHash, type: event.type, payload: event.payload ?? {}, at });
    });
  }

  async listEvents(runId: string, options: Store.ListEventsOptions = {}): Promise<RunEvent[]> {
    let query = this.#db.selectFrom('events').selectAll().where('run_id', '=', runId).orderBy('id');
    if (options.afterId !== undefined) query = query.where('id', '>', options.afterId);
    if (options.problemHash) query = query.where('problem_hash', '=', options.problemHash);
    if (options.types?.length === 0) return [];
    if (options.types) query = query.where('type', 'in', options.types);
    if (options.limit !== undefined) query = query.limit(options.limit);
    return (await query.execute()).map(toRunEvent);
  }

  async recordAction(input: Store.RecordActionInput): Promise<Action> {
    const action = inputs.parseStoreInput(inputs.recordActionInputSchema, input, 'action');
    return this.#write((trx, at) => insertAction(trx, action, at));
  }

  async listActions(runId: string, options: Store.ListActionsOptions = {}): Promise<Action[]> {
    let query = this.#db.selectFrom('actions').selectAll().where('run_id', '=', runId).orderBy('id');
    if (options.afterId !== undefined) query = query.where('id', '>', options.afterId);
    if (options.problemHash) query = query.where('problem_hash', '=', options.problemHash);
    if (options.types?.length === 0) return [];
    if (options.types) query = query.where('type', 'in', options.types);
    return (await query.execute()).map(toAction);
  }

  async listHints(runId: string, problemHash: string): Promise<Action[]> {
    const rows = await this.#db
      .selectFrom('actions')
      .selectAll()
      .where('run_id', '=', runId)
      .where('type', '=', 'hint')
      .where((eb) => eb.or([eb('problem_hash', '=', problemHash), eb('problem_hash', 'is', null)]))
      .orderBy('id')
      .execute();
    return rows.map(toAction);
  }

  async close(): Promise<void> {
    await this.#db.destroy();
  }
}
