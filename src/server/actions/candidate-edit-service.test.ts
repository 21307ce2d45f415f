import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, it } from 'node:test';
import pino from 'pino';
import { EDIT_CLAIMED_EVENT } from '../../agent/run/run-interventions.js';
import { FakeEvaluator, correctResult } from '../../../test-support/fake-evaluator.js';
import { openSeededTestStore, type SeededTestStore } from '../../../test-support/seeded-store/seeded-test-store.js';
import { CandidateEditService } from './candidate-edit-service.js';

const SOURCE = '# fake-verdict: correct 1.5\nimport torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x.clamp_min(0)\n';

let seeded: SeededTestStore;
let evaluator: FakeEvaluator;
let service: CandidateEditService;

beforeEach(async () => {
  seeded = await openSeededTestStore('kforge-edit-service-');
  evaluator = new FakeEvaluator();
  service = new CandidateEditService({ store: seeded.store, evaluator, logger: pino({ level: 'silent' }), claimWaitMs: 300 });
});

afterEach(async () => {
  await service.close();
  await seeded.cleanup();
});

describe('CandidateEditService with a run whose search is running', () => {
  it('leaves an edit the search claims to the search, and follows it until the run stores its evaluation', async () => {
    const { store } = seeded;
    await store.updateRunStatus('cpu-demo', 'running');
    const { candidate } = await service.submit({ candidateId: seeded.seeded.ids.reluChunked!, source: SOURCE });
    await store.recordEvent({
      runId: 'cpu-demo',
      problemHash: candidate.problemHash,
      type: EDIT_CLAIMED_EVENT,
      payload: { candidateId: candidate.id, live: true },
    });
    await service.idle();
    assert.equal(evaluator.calls.length, 0, 'the service did not take the device beside the search');
    assert.equal(service.isEvaluating(candidate.id), true, 'the page shows it as being evaluated');
    await store.recordEvaluation({
      candidateId: candidate.id,
      result: correctResult({ medianMs: 1.5 }),
      gpuSeconds: 1,
      optionsHash: 'run',
      cacheKey: `run-${candidate.id}`,
    });
    for (let waited = 0; service.isEvaluating(candidate.id) && waited < 50; waited += 1) await delay(100);
    assert.equal(service.isEvaluating(candidate.id), false);
    assert.equal((await store.getCandidate(candidate.id))?.evaluation?.verdict, 'correct');
  });

  it('evaluates the edit itself when no search claims it in time (its process died)', async () => {
    const { store } = seeded;
    await store.updateRunStatus('cpu-demo', 'running');
    const { candidate } = await service.submit({ candidateId: seeded.seeded.ids.reluChunked!, source: SOURCE });
    await service.idle();
    assert.equal(evaluator.calls.length, 1);
    assert.equal(evaluator.calls[0]!.source, SOURCE);
    assert.equal((await store.getCandidate(candidate.id))?.evaluation?.verdict, 'correct');
  });

  it('does not wait for a claim when the run is not running', async () => {
    const started = Date.now();
    const { candidate } = await service.submit({ candidateId: seeded.seeded.ids.reluChunked!, source: SOURCE });
    await service.idle();
    assert.equal(evaluator.calls.length, 1);
    assert.ok(Date.now() - started < 300 + 2000);
    assert.equal((await seeded.store.getCandidate(candidate.id))?.evaluation?.verdict, 'correct');
  });
});
