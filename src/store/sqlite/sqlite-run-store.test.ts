import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { StoreDataError } from '../errors/store-data-error.js';
import { StoreNotFoundError } from '../errors/store-not-found-error.js';
import { StoreOpenError } from '../errors/store-open-error.js';
import { StoreSchemaError } from '../errors/store-schema-error.js';
import { correctResult } from '../../../test-support/evaluation-results.js';
import { LATEST_STORE_MIGRATION } from '../migrations/store-migrations.js';
import { DEFAULT_STORE_PATH, openRunStore } from './open-run-store.js';
import { seedRun } from '../../../test-support/conformance/run-store/conformance-setup.js';
import { describeRunStoreConformance } from '../../../test-support/conformance/run-store-conformance.js';
import { SqliteRunStore } from './sqlite-run-store.js';

const folder = mkdtempSync(join(tmpdir(), 'kforge-store-'));
after(() => rmSync(folder, { recursive: true, force: true }));
let files = 0;
const freshPath = (): string => join(folder, `store-${++files}.db`);

describeRunStoreConformance('SqliteRunStore', async ({ now }) => {
  const store = await SqliteRunStore.open({ path: freshPath(), now });
  return { store, dispose: () => store.close() };
});

describe('SqliteRunStore on disk', () => {
  it('uses WAL, foreign keys and the migration table, and keeps data across reopening', async () => {
    const path = freshPath();
    const store = await SqliteRunStore.open({ path });
    const { run } = await seedRun(store);
    await store.close();
    const raw = new Database(path, { readonly: true });
    assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
    assert.deepEqual(raw.prepare('select name from kysely_migration').pluck().all(), [LATEST_STORE_MIGRATION]);
    raw.close();
    const reopened = await SqliteRunStore.open({ path, mustExist: true });
    assert.deepEqual(await reopened.getRun(run.id), run);
    await reopened.close();
  });

  it('rolls back every row of a write that fails part-way', async () => {
    const path = freshPath();
    const store = await SqliteRunStore.open({ path });
    const { run, relu } = await seedRun(store);
    const candidate = await store.addCandidate({ runId: run.id, problemHash: relu.hash, round: 0, source: 'x', origin: 'model' });
    const before = await store.getRun(run.id);
    // Make the event insert, the last statement of recordEvaluation, fail after the evaluation row is written.
    const raw = new Database(path);
    raw.exec(`create trigger fail_evaluated before insert on events when new.type = 'candidate-evaluated'
              begin select raise(abort, 'injected failure'); end`);
    raw.close();
    const input = { candidateId: candidate.id, result: correctResult(1, { eagerMs: 2, compileMs: 2 }), gpuSeconds: 1, optionsHash: 'o', cacheKey: 'k' };
    await assert.rejects(store.recordEvaluation(input), /injected failure/);
    assert.equal((await store.getCandidate(candidate.id))?.evaluation, undefined);
    assert.equal(await store.findEvaluationByCacheKey('k'), undefined);
    assert.deepEqual(
      (await store.pendingWork(run.id)).map((item) => item.id),
      [candidate.id],
    );
    assert.equal((await store.getRun(run.id))?.updatedAt, before?.updatedAt);
    await store.close();
  });

  it('reports a stored value that fails validation as StoreDataError naming the row', async () => {
    const path = freshPath();
    const store = await SqliteRunStore.open({ path });
    const { run, relu } = await seedRun(store);
    const candidate = await store.addCandidate({ runId: run.id, problemHash: relu.hash, round: 0, source: 'x', origin: 'model' });
    const { evaluation } = await store.recordEvaluation({
      candidateId: candidate.id,
      result: correctResult(1, { eagerMs: 2, compileMs: 2 }),
      gpuSeconds: 1,
      optionsHash: 'o',
      cacheKey: 'k',
    });
    const raw = new Database(path);
    raw.prepare('update evaluations set result_json = ? where id = ?').run('{"verdict":"great"}', evaluation.id);
    raw.close();
    await assert.rejects(
      store.getCandidate(candidate.id),
      (error: unknown) => error instanceof StoreDataError && error.table === 'evaluations' && error.column === 'result_json' && error.rowId === evaluation.id,
    );
    await store.close();
  });
});

describe('opening a store', () => {
  it('refuses a database written by a newer schema with a clear error', async () => {
    const path = freshPath();
    await (await SqliteRunStore.open({ path })).close();
    const raw = new Database(path);
    raw.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('0002_from_the_future', new Date().toISOString());
    raw.close();
    await assert.rejects(SqliteRunStore.open({ path }), (error: unknown) => {
      assert.ok(error instanceof StoreSchemaError);
      assert.deepEqual(error.unknownMigrations, ['0002_from_the_future']);
      assert.match(error.message, /written by a newer kforge .*0002_from_the_future.*upgrade kforge/);
      return true;
    });
  });

  it('refuses a file that is not a database, and a missing store when it must exist', async () => {
    const path = freshPath();
    writeFileSync(path, 'this is not sqlite, just text that is long enough to have a header '.repeat(10));
    await assert.rejects(SqliteRunStore.open({ path }), (error: unknown) => error instanceof StoreOpenError && /not a database/.test(error.message));
    const missing = join(folder, 'missing', 'kforge.db');
    await assert.rejects(openRunStore({ path: missing, mustExist: true }), (error: unknown) => error instanceof StoreNotFoundError && error.path === missing);
    await assert.rejects(SqliteRunStore.open({ path: missing, mustExist: true }), StoreNotFoundError);
    assert.equal(existsSync(join(folder, 'missing')), false);
  });

  it('creates .kforge/kforge.db under the working directory by default', async () => {
    const cwd = join(folder, 'project');
    const store = await openRunStore({ cwd });
    assert.equal(store.location, join(cwd, DEFAULT_STORE_PATH));
    await store.close();
    assert.ok(existsSync(join(cwd, '.kforge', 'kforge.db')));
  });
});
