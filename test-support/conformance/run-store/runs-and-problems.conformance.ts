import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sha256Hex } from '../../../src/store/content-hash.js';
import { StoreReferenceError } from '../../../src/store/errors/store-reference-error.js';
import { StoreValidationError } from '../../../src/store/errors/store-validation-error.js';
import { PROBLEM_SOURCES, seedRun, useFreshStore, type OpenEmptyStore } from './conformance-setup.js';

/**
 * The RunStore conformance suite's part on runs and their problems (run-store-conformance.ts runs every part).
 *
 * Longer than convention 4's 60 lines: a suite is a list of tests, one `it` each, read top to
 * bottom; a function per test would only move them apart.
 */
export function describeRunsAndProblems(open: OpenEmptyStore): void {
  describe('problems', () => {
    const handle = useFreshStore(open);

    it('keys a problem by the sha256 of its content and keeps the first name seen', async () => {
      const at = handle.peekNow();
      const first = await handle.store.upsertProblem({ name: '19_ReLU', source: PROBLEM_SOURCES.relu, path: 'a/19_ReLU.py' });
      assert.deepEqual(first, { hash: sha256Hex(PROBLEM_SOURCES.relu), name: '19_ReLU', source: PROBLEM_SOURCES.relu, path: 'a/19_ReLU.py', createdAt: at });
      const again = await handle.store.upsertProblem({ name: 'copy', source: PROBLEM_SOURCES.relu });
      assert.deepEqual(again, first);
      assert.deepEqual(await handle.store.getProblem(first.hash), first);
      assert.equal(await handle.store.getProblem(sha256Hex('other')), undefined);
    });
  });

  describe('runs', () => {
    const handle = useFreshStore(open);

    it('round-trips a run with its problems in order and a generated, typeable id', async () => {
      const { run, relu, softmax } = await seedRun(handle.store);
      assert.match(run.id, /^20260301-0900\d\d-[0-9a-f]{6}$/);
      assert.equal(run.status, 'running');
      assert.deepEqual(run.problemHashes, [relu.hash, softmax.hash]);
      assert.deepEqual(run.config, { backend: 'cpu', rounds: 3, nested: { trials: 5 } });
      assert.equal(run.finishedAt, null);
      assert.deepEqual(await handle.store.getRun(run.id), run);
      assert.deepEqual(await handle.store.listRunProblems(run.id), [relu, softmax]);
      assert.equal(await handle.store.getRun('no-such-run'), undefined);
    });

    it('records run-created and refuses a second run with the same id', async () => {
      const { run } = await seedRun(handle.store, { id: 'my-run' });
      assert.equal(run.id, 'my-run');
      const events = await handle.store.listEvents(run.id);
      assert.deepEqual(
        events.map((event) => [event.type, event.payload]),
        [['run-created', { strategy: 'refine', model: 'fake:model', problems: 2 }]],
      );
      await assert.rejects(seedRun(handle.store, { id: 'my-run' }), StoreValidationError);
    });

    it('rolls back a run whose problem list names an unknown problem: no run, no problems, no events', async () => {
      const relu = await handle.store.upsertProblem({ name: 'relu', source: PROBLEM_SOURCES.relu });
      const unknown = sha256Hex('never stored');
      await assert.rejects(
        handle.store.createRun({ id: 'partial', strategy: 'refine', model: 'm', config: {}, problemHashes: [relu.hash, unknown] }),
        (error: unknown) => error instanceof StoreReferenceError && error.entity === 'problem' && error.id === unknown,
      );
      assert.equal(await handle.store.getRun('partial'), undefined);
      assert.deepEqual(await handle.store.listRuns(), []);
      assert.deepEqual(await handle.store.listRunProblems('partial'), []);
      assert.deepEqual(await handle.store.listEvents('partial'), []);
      const retried = await handle.store.createRun({ id: 'partial', strategy: 'refine', model: 'm', config: {}, problemHashes: [relu.hash] });
      assert.deepEqual(retried.problemHashes, [relu.hash]);
    });

    it('refuses malformed runs, naming the field', async () => {
      const relu = await handle.store.upsertProblem({ name: 'relu', source: PROBLEM_SOURCES.relu });
      await assert.rejects(
        handle.store.createRun({ strategy: 'refine', model: 'm', config: {}, problemHashes: [relu.hash, relu.hash] }),
        (error: unknown) => error instanceof StoreValidationError && error.field === 'run.problemHashes',
      );
      await assert.rejects(
        handle.store.createRun({ strategy: '', model: 'm', config: {}, problemHashes: [relu.hash] }),
        (error: unknown) => error instanceof StoreValidationError && error.field === 'run.strategy',
      );
      await assert.rejects(
        handle.store.createRun({ id: 'has space', strategy: 'refine', model: 'm', config: {}, problemHashes: [relu.hash] }),
        (error: unknown) => error instanceof StoreValidationError && error.field === 'run.id',
      );
    });

    it('moves a run through its statuses, stamping finishedAt and recording an event for each', async () => {
      const { run } = await seedRun(handle.store);
      const stopped = await handle.store.updateRunStatus(run.id, 'stopped');
      assert.equal(stopped.status, 'stopped');
      assert.equal(stopped.finishedAt, null);
      await handle.store.updateRunStatus(run.id, 'running');
      const failedAt = handle.peekNow();
      const failed = await handle.store.updateRunStatus(run.id, 'failed', { error: 'evaluator crashed' });
      assert.deepEqual([failed.status, failed.error, failed.finishedAt, failed.updatedAt], ['failed', 'evaluator crashed', failedAt, failedAt]);
      const finished = await handle.store.updateRunStatus(run.id, 'finished');
      assert.equal(finished.error, null);
      assert.deepEqual(await handle.store.getRun(run.id), finished);
      const types = (await handle.store.listEvents(run.id)).map((event) => event.type);
      assert.deepEqual(types, ['run-created', 'run-stopped', 'run-resumed', 'run-failed', 'run-finished']);
      await assert.rejects(handle.store.updateRunStatus('nope', 'stopped'), StoreReferenceError);
      await assert.rejects(handle.store.updateRunStatus(run.id, 'exploded' as never), StoreValidationError);
    });

    it('lists runs newest first, filtered by status and limited', async () => {
      const first = (await seedRun(handle.store, { id: 'first' })).run;
      const second = (await seedRun(handle.store, { id: 'second' })).run;
      await handle.store.updateRunStatus(first.id, 'finished');
      assert.deepEqual(
        (await handle.store.listRuns()).map((run) => run.id),
        ['second', 'first'],
      );
      assert.deepEqual(
        (await handle.store.listRuns({ status: 'finished' })).map((run) => run.id),
        ['first'],
      );
      assert.deepEqual(
        (await handle.store.listRuns({ limit: 1 })).map((run) => run.id),
        [second.id],
      );
    });
  });
}
