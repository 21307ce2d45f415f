import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeEvaluator } from '../../test-support/fake-evaluator.js';
import type { RunDetail, RunList } from './api-types.js';
import { createServer } from './create-server.js';
import { openSeededTestStore, type SeededTestStore } from '../../test-support/seeded-store/seeded-test-store.js';
import type { ZodApp } from './routes/server-context.js';

let seededStore: SeededTestStore;
let app: ZodApp;

before(async () => {
  seededStore = await openSeededTestStore();
  app = await createServer({ store: seededStore.store, evaluator: new FakeEvaluator(), webRoot: null });
});
after(async () => {
  await app.close();
  await seededStore.cleanup();
});

describe('GET /api/runs', () => {
  it('lists every run, newest first, with status, strategy, model, backend and totals', async () => {
    const response = await app.inject({ url: '/api/runs' });
    assert.equal(response.statusCode, 200);
    const body = response.json<RunList>();
    assert.equal(body.store, seededStore.storePath);
    assert.deepEqual(
      body.runs.map((run) => [run.id, run.status, run.strategy, run.backend]),
      [
        ['h200-demo', 'stopped', 'refine', 'cuda'],
        ['cpu-demo', 'finished', 'ideas', 'cpu'],
      ],
    );
    const cpu = body.runs[1]!;
    assert.equal(cpu.model, 'openai-compatible:Qwen/Qwen3-32B');
    assert.equal(cpu.totals.problems, 3);
    assert.equal(cpu.totals.problemsSolved, 3);
    assert.equal(cpu.totals.candidates, 14);
    assert.equal(cpu.totals.evaluated, 13);
    assert.ok(cpu.totals.inputTokens > 0 && cpu.totals.gpuSeconds > 0);
    assert.equal(cpu.stopPending, false);
  });

  it('gives each problem its level from its path and its accepted kernel', async () => {
    const body = (await app.inject({ url: '/api/runs' })).json<RunList>();
    const cpu = body.runs.find((run) => run.id === 'cpu-demo')!;
    assert.deepEqual(
      cpu.problems.map((problem) => [problem.name, problem.level]),
      [
        ['01_relu', 'level1'],
        ['05_softmax', 'level1'],
        ['03_bias_silu_scale_clamp', 'level2'],
      ],
    );
    const softmax = cpu.problems.find((problem) => problem.name === '05_softmax')!;
    assert.equal(softmax.acceptedCandidateId, seededStore.seeded.ids.softTwoPass);
    assert.equal(cpu.problems[0]!.acceptedCandidateId, null);
    assert.equal(cpu.problems[0]!.bestCandidateId, seededStore.seeded.ids.reluHuman);
  });
});

describe('GET /api/runs/:runId', () => {
  it('returns the run with its config, actions, ideas and recent events', async () => {
    const response = await app.inject({ url: '/api/runs/cpu-demo' });
    assert.equal(response.statusCode, 200);
    const { run, actions, ideas, recentEvents } = response.json<RunDetail>();
    assert.equal(run.resumable, true);
    assert.equal((run.config.evaluation as { backend: string }).backend, 'cpu');
    assert.deepEqual(
      actions.map((action) => action.type),
      ['hint', 'drop-idea', 'pin-idea', 'edit-candidate', 'accept'],
    );
    assert.deepEqual(
      ideas.map((idea) => [idea.label, idea.status]),
      [
        ['openmp-parallel', 'active'],
        ['simd-chunks', 'pinned'],
        ['torch-fallback', 'dropped'],
        ['online-softmax', 'active'],
      ],
    );
    assert.ok(recentEvents.length > 0 && recentEvents.length <= 100);
    assert.ok(recentEvents.some((event) => event.type === 'candidate-evaluated'));
  });

  it('answers 404 with a way forward for an unknown run, and 400 naming the field for a malformed id', async () => {
    const missing = await app.inject({ url: '/api/runs/no-such-run' });
    assert.equal(missing.statusCode, 404);
    assert.match(missing.json<{ error: { message: string } }>().error.message, /no run `no-such-run`.*GET \/api\/runs/);
    const malformed = await app.inject({ url: '/api/runs/%20bad%20id' });
    assert.equal(malformed.statusCode, 400);
    const error = malformed.json<{ error: { code: string; field: string } }>().error;
    assert.equal(error.code, 'invalid-request');
    assert.equal(error.field, 'params.runId');
  });
});

describe('GET /api/runs/:runId/events', () => {
  it('pages through events after a cursor', async () => {
    const first = (await app.inject({ url: '/api/runs/cpu-demo/events?limit=5' })).json<{ events: Array<{ id: number }> }>().events;
    assert.equal(first.length, 5);
    const next = (await app.inject({ url: `/api/runs/cpu-demo/events?afterId=${first.at(-1)!.id}&limit=5` })).json<{ events: Array<{ id: number }> }>().events;
    assert.ok(next[0]!.id > first.at(-1)!.id);
    const bad = await app.inject({ url: '/api/runs/cpu-demo/events?limit=0' });
    assert.equal(bad.statusCode, 400);
  });
});

describe('GET /api/openapi.json', () => {
  it('describes every API route with its schemas', async () => {
    const response = await app.inject({ url: '/api/openapi.json' });
    assert.equal(response.statusCode, 200);
    const document = response.json<{ openapi: string; paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }>();
    assert.equal(document.openapi, '3.1.0');
    for (const path of [
      '/api/runs',
      '/api/runs/{runId}',
      '/api/runs/{runId}/problems/{problemHash}',
      '/api/candidates/{candidateId}',
      '/api/runs/{runId}/stop',
      '/api/runs/{runId}/resume',
      '/api/runs/{runId}/hints',
      '/api/ideas/{ideaId}/pin',
      '/api/ideas/{ideaId}/drop',
      '/api/candidates/{candidateId}/accept',
      '/api/candidates/{candidateId}/edits',
      '/api/compare/runs',
      '/api/runs/{runId}/report',
      '/api/stream/runs/{runId}',
    ]) {
      assert.ok(document.paths[path], `${path} is in the document`);
    }
    const runs = document.paths['/api/runs']!.get!.responses['200'] as { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
    assert.ok(runs.content['application/json']!.schema.properties.runs);
    assert.equal(document.paths['/api/openapi.json'], undefined);
  });
});

describe('GET /api/health', () => {
  it('names the store and says no token is needed on loopback', async () => {
    const body = (await app.inject({ url: '/api/health' })).json<{ ok: boolean; runs: number; tokenRequired: boolean }>();
    assert.deepEqual([body.ok, body.runs, body.tokenRequired], [true, 2, false]);
  });
});
