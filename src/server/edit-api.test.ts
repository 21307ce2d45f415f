import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, afterEach, before, describe, it } from 'node:test';
import { FakeEvaluator, judgeByMarker } from '../../test-support/fake-evaluator.js';
import type { EvaluationRequest } from '../eval/evaluator.js';
import type { CandidateDetail, EditResponse } from './api-types.js';
import { createServer } from './create-server.js';
import { openSeededTestStore, type SeededTestStore } from '../../test-support/seeded-store/seeded-test-store.js';
import type { ZodApp } from './routes/server-context.js';

let seededStore: SeededTestStore;
let evaluator: FakeEvaluator;
let app: ZodApp;
let failNext = false;
const seen: Array<{ request: EvaluationRequest; problemSource: string }> = [];

before(async () => {
  seededStore = await openSeededTestStore();
  evaluator = new FakeEvaluator({
    delayMs: 30,
    judge: async (source, request) => {
      seen.push({ request, problemSource: await readFile(request.problemPath, 'utf8') });
      if (failNext) {
        failNext = false;
        throw new Error('the worker could not start: python3 has no torch');
      }
      return judgeByMarker(source, request);
    },
  });
  app = await createServer({ store: seededStore.store, evaluator, webRoot: null });
});
afterEach(() => {
  failNext = false;
});
after(async () => {
  await app.close();
  await seededStore.cleanup();
});

/** Polls the candidate until the server no longer says it is evaluating it. */
async function settled(id: number): Promise<CandidateDetail> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const detail = (await app.inject({ url: `/api/candidates/${id}` })).json<CandidateDetail>();
    if (!detail.candidate.evaluating) return detail;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`candidate ${id} was still evaluating after 2 s`);
}

describe('POST /api/candidates/:candidateId/edits', () => {
  it('stores the edit as a human child of the original, evaluates it under the run settings, and records the verdict', async () => {
    const original = seededStore.seeded.ids.reluChunked!;
    const source = '# fake-verdict: correct 2.5\nimport torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x.clamp_min(0)\n';
    const response = await app.inject({ method: 'POST', url: `/api/candidates/${original}/edits`, payload: { source, note: 'clamp instead' } });
    assert.equal(response.statusCode, 202);
    const { candidate, action } = response.json<EditResponse>();
    assert.deepEqual(
      [candidate.origin, candidate.parentId, candidate.round, candidate.ideaLabel, candidate.evaluating, candidate.verdict],
      ['human', original, 4, 'simd-chunks', true, null],
    );
    assert.deepEqual([action.type, action.candidateId, action.note], ['edit-candidate', candidate.id, 'clamp instead']);

    const detail = await settled(candidate.id);
    assert.equal(detail.evaluation?.result.verdict, 'correct');
    assert.equal(detail.evaluation?.result.timing?.candidate_ms.median, 2.5);
    const stored = await seededStore.store.getCandidate(candidate.id);
    assert.deepEqual([stored?.origin, stored?.parentId, stored?.source, stored?.evaluation?.verdict], ['human', original, source, 'correct']);

    const call = evaluator.calls.at(-1)!;
    assert.equal(call.source, source);
    assert.deepEqual(
      [call.request.backend, call.request.precision, call.request.tolerance, call.request.trials, call.request.perfTrials],
      ['cpu', 'fp32', 'kernelbench', 5, 20],
    );
    assert.equal(seen.at(-1)!.problemSource, seededStore.seeded.problems.relu.source);
    assert.ok(call.request.candidatePath.startsWith(seededStore.folder), "the file goes to the run's candidates folder");
    const events = await seededStore.store.listEvents('cpu-demo', { types: ['candidate-evaluated'] });
    assert.equal(events.at(-1)?.payload.candidateId, candidate.id);
  });

  it('records a failing verdict as data', async () => {
    const response = await app.inject({
      method: 'POST',
      url: `/api/candidates/${seededStore.seeded.ids.softTwoPass}/edits`,
      payload: { source: '# fake-verdict: compile_error\n' },
    });
    const { candidate } = response.json<EditResponse>();
    const detail = await settled(candidate.id);
    assert.equal(detail.evaluation?.result.verdict, 'compile_error');
    assert.equal(detail.evaluationError, null);
  });

  it('keeps the candidate unevaluated and says why when the evaluator itself fails', async () => {
    failNext = true;
    const response = await app.inject({
      method: 'POST',
      url: `/api/candidates/${seededStore.seeded.ids.fusedParallel}/edits`,
      payload: { source: '# fake-verdict: correct 1\n' },
    });
    const { candidate } = response.json<EditResponse>();
    const detail = await settled(candidate.id);
    assert.equal(detail.evaluation, null);
    assert.match(detail.evaluationError ?? '', /python3 has no torch/);
    const failed = await seededStore.store.listEvents('cpu-demo', { types: ['candidate-evaluation-failed'] });
    assert.equal(failed.at(-1)?.payload.candidateId, candidate.id);
  });

  it('evaluates edits one at a time', async () => {
    const before = evaluator.maxConcurrent;
    const ids = await Promise.all(
      [1, 2, 3].map(async (n) => {
        const response = await app.inject({
          method: 'POST',
          url: `/api/candidates/${seededStore.seeded.ids.reluSerial}/edits`,
          payload: { source: `# fake-verdict: correct ${n}\n` },
        });
        return response.json<EditResponse>().candidate.id;
      }),
    );
    for (const id of ids) await settled(id);
    assert.equal(Math.max(before, evaluator.maxConcurrent), 1);
  });

  it('refuses an empty source and an unknown candidate', async () => {
    const empty = await app.inject({ method: 'POST', url: `/api/candidates/${seededStore.seeded.ids.reluSerial}/edits`, payload: { source: '' } });
    assert.equal(empty.statusCode, 400);
    assert.equal(empty.json<{ error: { field: string } }>().error.field, 'body.source');
    const unknown = await app.inject({ method: 'POST', url: '/api/candidates/99999/edits', payload: { source: 'x' } });
    assert.equal(unknown.statusCode, 404);
  });

  it('refuses to evaluate a candidate of a run without stored evaluation settings', async () => {
    const { relu } = seededStore.seeded.problems;
    await seededStore.store.createRun({ id: 'no-plan', strategy: 'refine', model: 'x:y', config: {}, problemHashes: [relu.hash] });
    const root = await seededStore.store.addCandidate({ runId: 'no-plan', problemHash: relu.hash, round: 0, source: 'x', origin: 'files' });
    const response = await app.inject({ method: 'POST', url: `/api/candidates/${root.id}/edits`, payload: { source: 'y' } });
    assert.equal(response.statusCode, 409);
    assert.equal((await seededStore.store.listCandidates('no-plan')).length, 1, 'nothing was stored');
  });
});
