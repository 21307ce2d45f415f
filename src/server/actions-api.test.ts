import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeEvaluator } from '../../test-support/fake-evaluator.js';
import type { LaunchedRun, RunLauncher } from './actions/run-launcher.js';
import type { RunDetail, StopResponse } from './api-types.js';
import { createServer } from './create-server.js';
import { openSeededTestStore, type SeededTestStore } from '../../test-support/seeded-store/seeded-test-store.js';
import type { ZodApp } from './routes/server-context.js';

/** A launcher that records what it was asked to resume. */
class RecordingLauncher implements RunLauncher {
  readonly calls: Array<{ runId: string; storePath: string }> = [];
  async resume(input: { runId: string; storePath: string }): Promise<LaunchedRun> {
    this.calls.push(input);
    return { pid: 4242, logPath: `/logs/resume-${input.runId}.log` };
  }
}

let seededStore: SeededTestStore;
let app: ZodApp;
const launcher = new RecordingLauncher();

before(async () => {
  seededStore = await openSeededTestStore();
  app = await createServer({ store: seededStore.store, evaluator: new FakeEvaluator(), webRoot: null, launcher, storePath: seededStore.storePath });
});
after(async () => {
  await app.close();
  await seededStore.cleanup();
});

const post = (url: string, payload?: unknown) =>
  app.inject({ method: 'POST', url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });

describe('POST /api/runs/:runId/hints', () => {
  it('stores a problem hint that the search reads with listHints, with the time', async () => {
    const { relu } = seededStore.seeded.problems;
    seededStore.clock.advance(1000);
    const response = await post('/api/runs/cpu-demo/hints', { note: '  Try 16-wide chunks.  ', problemHash: relu.hash });
    assert.equal(response.statusCode, 201);
    const { action } = response.json<{ action: { id: number; note: string; createdAt: string } }>();
    assert.equal(action.note, 'Try 16-wide chunks.');
    assert.equal(action.createdAt, seededStore.clock.now().toISOString());
    const hints = await seededStore.store.listHints('cpu-demo', relu.hash);
    assert.equal(hints.at(-1)?.id, action.id);
  });

  it('stores a run-wide hint for every problem', async () => {
    const response = await post('/api/runs/cpu-demo/hints', { note: 'Keep OpenMP off for tiny inputs.' });
    assert.equal(response.statusCode, 201);
    const { fused } = seededStore.seeded.problems;
    assert.ok(
      (await seededStore.store.listHints('cpu-demo', fused.hash)).some((hint) => hint.note === 'Keep OpenMP off for tiny inputs.' && hint.problemHash === null),
    );
  });

  it('refuses an empty hint, naming the field', async () => {
    const response = await post('/api/runs/cpu-demo/hints', { note: '   ' });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json<{ error: { field: string } }>().error.field, 'body.note');
  });
});

describe('POST /api/ideas/:ideaId/pin and /drop', () => {
  it('sets the idea status and records the action', async () => {
    const idea = (await seededStore.store.listIdeas('cpu-demo')).find((candidate) => candidate.label === 'online-softmax')!;
    const pinned = await post(`/api/ideas/${idea.id}/pin`, {});
    assert.equal(pinned.statusCode, 200);
    assert.equal(pinned.json<{ idea: { status: string } }>().idea.status, 'pinned');
    assert.equal((await seededStore.store.getIdea(idea.id))?.status, 'pinned');
    const dropped = await post(`/api/ideas/${idea.id}/drop`, { note: 'the fused two-pass is better' });
    assert.equal(dropped.json<{ action: { type: string; note: string } }>().action.type, 'drop-idea');
    assert.equal((await seededStore.store.getIdea(idea.id))?.status, 'dropped');
    assert.equal((await post('/api/ideas/999999/pin', {})).statusCode, 404);
  });
});

describe('POST /api/candidates/:candidateId/accept', () => {
  it('accepts a correct candidate with a note', async () => {
    const id = seededStore.seeded.ids.reluChunked!;
    const response = await post(`/api/candidates/${id}/accept`, { note: 'vectorised, tail handled' });
    assert.equal(response.statusCode, 201);
    const stored = (await seededStore.store.listActions('cpu-demo', { types: ['accept'] })).at(-1)!;
    assert.deepEqual([stored.candidateId, stored.note, stored.problemHash], [id, 'vectorised, tail handled', seededStore.seeded.problems.relu.hash]);
  });

  it('refuses a candidate that is not correct', async () => {
    const response = await post(`/api/candidates/${seededStore.seeded.ids.reluTail}/accept`, {});
    assert.equal(response.statusCode, 409);
    assert.match(response.json<{ error: { message: string } }>().error.message, /is incorrect: only a correct candidate can be accepted/);
  });
});

describe('POST /api/runs/:runId/stop', () => {
  it('records a stop for a running run and reports it unacknowledged until the run stops', async () => {
    await seededStore.store.updateRunStatus('h200-demo', 'running');
    const response = await post('/api/runs/h200-demo/stop');
    assert.equal(response.statusCode, 202);
    const body = response.json<StopResponse>();
    assert.deepEqual([body.action.type, body.status, body.acknowledged], ['stop', 'running', false]);
    const pending = (await app.inject({ url: '/api/runs/h200-demo' })).json<RunDetail>();
    assert.equal(pending.run.stopPending, true);
    await seededStore.store.updateRunStatus('h200-demo', 'stopped');
    const acknowledged = (await app.inject({ url: '/api/runs/h200-demo' })).json<RunDetail>();
    assert.equal(acknowledged.run.stopPending, false);
  });

  it('answers 409 for a run that is not running', async () => {
    const response = await post('/api/runs/cpu-demo/stop');
    assert.equal(response.statusCode, 409);
    assert.match(response.json<{ error: { message: string } }>().error.message, /is finished, not running/);
  });
});

describe('POST /api/runs/:runId/resume', () => {
  it('starts the run through the launcher with the store path and records the action', async () => {
    const response = await post('/api/runs/h200-demo/resume', {});
    assert.equal(response.statusCode, 202);
    assert.deepEqual(launcher.calls.at(-1), { runId: 'h200-demo', storePath: seededStore.storePath });
    const { action, pid, logPath } = response.json<{ action: { type: string; note: string }; pid: number; logPath: string }>();
    assert.deepEqual([action.type, pid, logPath], ['resume', 4242, '/logs/resume-h200-demo.log']);
    assert.match(action.note, /pid 4242/);
  });

  it('refuses a running run unless forced, and a finished one', async () => {
    await seededStore.store.updateRunStatus('h200-demo', 'running');
    const refused = await post('/api/runs/h200-demo/resume', {});
    assert.equal(refused.statusCode, 409);
    assert.match(refused.json<{ error: { message: string } }>().error.message, /"force": true/);
    const calls = launcher.calls.length;
    assert.equal((await post('/api/runs/h200-demo/resume', { force: true })).statusCode, 202);
    assert.equal(launcher.calls.length, calls + 1);
    assert.equal((await post('/api/runs/cpu-demo/resume', {})).statusCode, 409);
  });

  it('is refused for a run without an optimize plan', async () => {
    const { relu } = seededStore.seeded.problems;
    await seededStore.store.createRun({ id: 'foreign', strategy: 'refine', model: 'x:y', config: { made: 'elsewhere' }, problemHashes: [relu.hash] });
    await seededStore.store.updateRunStatus('foreign', 'stopped');
    const response = await post('/api/runs/foreign/resume', {});
    assert.equal(response.statusCode, 409);
    assert.equal(response.json<{ error: { code: string } }>().error.code, 'not-resumable');
  });
});
