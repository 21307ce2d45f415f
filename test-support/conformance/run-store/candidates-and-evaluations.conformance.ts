import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evaluationCacheKey, hashEvaluationOptions, sha256Hex } from '../../../src/store/content-hash.js';
import { StoreReferenceError } from '../../../src/store/errors/store-reference-error.js';
import { StoreValidationError } from '../../../src/store/errors/store-validation-error.js';
import { correctResult, failedResult } from '../../evaluation-results.js';
import type { RunStore } from '../../../src/store/run-store.js';
import { seedRun, useFreshStore, type OpenEmptyStore } from './conformance-setup.js';

const OPTIONS_HASH = hashEvaluationOptions({ backend: 'cpu', precision: 'fp32', trials: 5 });

function keyFor(source: string, problemHash: string): string {
  return evaluationCacheKey({ sourceHash: sha256Hex(source), problemHash, optionsHash: OPTIONS_HASH });
}

async function modelCall(store: RunStore, runId: string, problemHash: string) {
  return store.recordModelCall({
    runId,
    problemHash,
    round: 0,
    model: 'fake:model',
    messages: [
      { role: 'system', content: 'You write kernels.' },
      { role: 'user', content: [{ type: 'text', text: 'Make ReLU fast.' }] },
    ],
    replyText: '```python\nclass ModelNew: ...\n```',
    reasoningText: 'Use a vectorised loop.',
    inputTokens: 1200,
    outputTokens: 300,
    latencyMs: 850.5,
    costUsd: 0.0123,
  });
}

/**
 * The RunStore conformance suite's part on candidates, their evaluations and model calls (run-store-conformance.ts runs every part).
 *
 * Longer than convention 4's 60 lines: a suite is a list of tests, one `it` each, read top to
 * bottom; a function per test would only move them apart.
 */
export function describeCandidatesAndEvaluations(open: OpenEmptyStore): void {
  describe('model calls and candidates', () => {
    const handle = useFreshStore(open);

    it('round-trips a model call with every field, and one with only the required ones', async () => {
      const { run, relu } = await seedRun(handle.store);
      const call = await modelCall(handle.store, run.id, relu.hash);
      assert.deepEqual(await handle.store.getModelCall(call.id), call);
      assert.equal(call.messages[1]?.role, 'user');
      assert.deepEqual([call.inputTokens, call.outputTokens, call.latencyMs, call.costUsd], [1200, 300, 850.5, 0.0123]);
      const failed = await handle.store.recordModelCall({ runId: run.id, model: 'fake:model', messages: [], error: 'rate limited' });
      assert.deepEqual(
        [failed.problemHash, failed.round, failed.replyText, failed.reasoningText, failed.inputTokens, failed.costUsd, failed.error],
        [null, null, null, null, null, null, 'rate limited'],
      );
      assert.deepEqual(
        (await handle.store.listModelCalls(run.id)).map((item) => item.id),
        [call.id, failed.id],
      );
      assert.deepEqual(
        (await handle.store.listModelCalls(run.id, { problemHash: relu.hash })).map((item) => item.id),
        [call.id],
      );
      await assert.rejects(handle.store.recordModelCall({ runId: 'nope', model: 'm', messages: [] }), StoreReferenceError);
      await assert.rejects(
        handle.store.recordModelCall({ runId: run.id, model: 'm', messages: [{ role: 'robot', content: 'x' } as never] }),
        (error: unknown) => error instanceof StoreValidationError && error.field.startsWith('modelCall.messages'),
      );
    });

    it('round-trips candidates with lineage, idea label, origin and the model call that made them', async () => {
      const { run, relu } = await seedRun(handle.store);
      const call = await modelCall(handle.store, run.id, relu.hash);
      const idea = await handle.store.addIdea({ runId: run.id, problemHash: relu.hash, round: 0, label: 'vectorise', text: 'Process 8 floats per step.' });
      const root = await handle.store.addCandidate({ runId: run.id, problemHash: relu.hash, round: 0, source: 'root', origin: 'files' });
      const child = await handle.store.addCandidate({
        runId: run.id,
        problemHash: relu.hash,
        round: 1,
        source: 'child',
        origin: 'model',
        parentId: root.id,
        ideaId: idea.id,
        modelCallId: call.id,
      });
      const grandchild = await handle.store.addCandidate({
        runId: run.id,
        problemHash: relu.hash,
        round: 2,
        source: 'edited',
        origin: 'human',
        parentId: child.id,
      });
      assert.deepEqual(
        [child.parentId, child.ideaId, child.ideaLabel, child.modelCallId, child.origin, child.sourceHash],
        [root.id, idea.id, 'vectorise', call.id, 'model', sha256Hex('child')],
      );
      assert.deepEqual(await handle.store.getCandidate(child.id), { ...child, evaluation: undefined });
      assert.deepEqual(
        (await handle.store.candidateLineage(grandchild.id)).map((item) => item.id),
        [root.id, child.id, grandchild.id],
      );
      assert.deepEqual(await handle.store.candidateLineage(root.id), [root]);
      assert.deepEqual(await handle.store.candidateLineage(9999), []);
      const added = (await handle.store.listEvents(run.id, { types: ['candidate-added'] })).map((event) => event.payload.candidateId);
      assert.deepEqual(added, [root.id, child.id, grandchild.id]);
    });

    it('refuses candidates that point outside their run or problem', async () => {
      const { run, relu, softmax } = await seedRun(handle.store);
      const other = (await seedRun(handle.store, { id: 'other' })).run;
      const root = await handle.store.addCandidate({ runId: run.id, problemHash: relu.hash, round: 0, source: 'a', origin: 'model' });
      const base = { runId: run.id, round: 1, source: 'b', origin: 'model' as const };
      await assert.rejects(handle.store.addCandidate({ ...base, problemHash: softmax.hash, parentId: root.id }), StoreValidationError);
      await assert.rejects(handle.store.addCandidate({ ...base, runId: other.id, problemHash: relu.hash, parentId: root.id }), StoreReferenceError);
      await assert.rejects(handle.store.addCandidate({ ...base, problemHash: relu.hash, parentId: 9999 }), StoreReferenceError);
      await assert.rejects(handle.store.addCandidate({ ...base, problemHash: sha256Hex('not in run') }), StoreReferenceError);
      await assert.rejects(handle.store.addCandidate({ ...base, problemHash: relu.hash, origin: 'alien' as never }), StoreValidationError);
      assert.deepEqual(
        (await handle.store.listCandidates(run.id)).map((item) => item.id),
        [root.id],
      );
      assert.deepEqual(await handle.store.listCandidates(other.id), []);
    });
  });

  describe('evaluations', () => {
    const handle = useFreshStore(open);

    it('round-trips an evaluation and copies verdict, speedups and median out of the result', async () => {
      const { run, relu } = await seedRun(handle.store);
      const candidate = await handle.store.addCandidate({ runId: run.id, problemHash: relu.hash, round: 0, source: 'fast', origin: 'model' });
      const result = correctResult(0.5, { eagerMs: 2, compileMs: 1 });
      const { evaluation, created } = await handle.store.recordEvaluation({
        candidateId: candidate.id,
        result,
        gpuSeconds: 3.25,
        optionsHash: OPTIONS_HASH,
        cacheKey: keyFor('fast', relu.hash),
      });
      assert.equal(created, true);
      assert.deepEqual(evaluation.result, result);
      assert.deepEqual(
        [
          evaluation.verdict,
          evaluation.speedupVsEager,
          evaluation.speedupVsCompile,
          evaluation.speedupVsBest,
          evaluation.candidateMedianMs,
          evaluation.gpuSeconds,
        ],
        ['correct', 4, 2, 2, 0.5, 3.25],
      );
      assert.deepEqual([evaluation.runId, evaluation.problemHash, evaluation.reusedFromEvaluationId], [run.id, relu.hash, null]);
      assert.deepEqual(await handle.store.getCandidate(candidate.id), { ...candidate, evaluation });

      const failing = await handle.store.addCandidate({ runId: run.id, problemHash: relu.hash, round: 0, source: 'wrong', origin: 'model' });
      const rejected = failedResult('rejected', { check: 'timing-replay', message: 'output replayed from an earlier call' });
      const second = await handle.store.recordEvaluation({
        candidateId: failing.id,
        result: rejected,
        gpuSeconds: 0.5,
        optionsHash: OPTIONS_HASH,
        cacheKey: keyFor('wrong', relu.hash),
      });
      assert.deepEqual(second.evaluation.result.reasons, [{ check: 'timing-replay', message: 'output replayed from an earlier call' }]);
      assert.deepEqual([second.evaluation.speedupVsBest, second.evaluation.candidateMedianMs], [null, null]);
    });

    it('records an evaluation once however often it is recorded', async () => {
      const { run, relu } = await seedRun(handle.store);
      const candidate = await handle.store.addCandidate({ runId: run.id, problemHash: relu.hash, round: 0, source: 'x', origin: 'model' });
      const input = {
        candidateId: candidate.id,
        result: failedResult('incorrect'),
        gpuSeconds: 1,
        optionsHash: OPTIONS_HASH,
        cacheKey: keyFor('x', relu.hash),
      };
      const first = await handle.store.recordEvaluation(input);
      const again = await handle.store.recordEvaluation({ ...input, result: correctResult(1, { eagerMs: 1, compileMs: 1 }), gpuSeconds: 9 });
      assert.equal(again.created, false);
      assert.deepEqual(again.evaluation, first.evaluation);
      assert.equal((await handle.store.getCandidate(candidate.id))?.evaluation?.verdict, 'incorrect');
      assert.equal((await handle.store.listEvents(run.id, { types: ['candidate-evaluated'] })).length, 1);
      assert.equal((await handle.store.getRunSummary(run.id))?.totals.gpuSeconds, 1);
      await assert.rejects(handle.store.recordEvaluation({ ...input, candidateId: 9999 }), StoreReferenceError);
      await assert.rejects(handle.store.recordEvaluation({ ...input, result: { verdict: 'great' } as never }), StoreValidationError);
    });

    it('finds an evaluation by cache key across runs and records reuse', async () => {
      const { run, relu } = await seedRun(handle.store);
      const other = (await seedRun(handle.store, { id: 'other' })).run;
      const key = keyFor('same source', relu.hash);
      const original = await handle.store.addCandidate({ runId: run.id, problemHash: relu.hash, round: 0, source: 'same source', origin: 'model' });
      assert.equal(await handle.store.findEvaluationByCacheKey(key), undefined);
      const first = await handle.store.recordEvaluation({
        candidateId: original.id,
        result: correctResult(1, { eagerMs: 2, compileMs: 3 }),
        gpuSeconds: 4,
        optionsHash: OPTIONS_HASH,
        cacheKey: key,
      });
      const copy = await handle.store.addCandidate({ runId: other.id, problemHash: relu.hash, round: 0, source: 'same source', origin: 'model' });
      const found = await handle.store.findEvaluationByCacheKey(key);
      assert.deepEqual(found, first.evaluation);
      const reused = await handle.store.recordEvaluation({
        candidateId: copy.id,
        result: found!.result,
        gpuSeconds: 0,
        optionsHash: OPTIONS_HASH,
        cacheKey: key,
        reusedFromEvaluationId: found!.id,
      });
      assert.deepEqual([reused.evaluation.reusedFromEvaluationId, reused.evaluation.runId], [first.evaluation.id, other.id]);
      assert.deepEqual(await handle.store.findEvaluationByCacheKey(key), first.evaluation);
      const events = await handle.store.listEvents(other.id, { types: ['candidate-evaluated'] });
      assert.equal(events[0]?.payload.reused, true);
    });

    it('lists candidates with their evaluations by problem and round, and pendingWork lists the unevaluated', async () => {
      const { run, relu, softmax } = await seedRun(handle.store);
      const add = (problemHash: string, round: number, source: string) =>
        handle.store.addCandidate({ runId: run.id, problemHash, round, source, origin: 'model' });
      const a = await add(relu.hash, 0, 'a');
      const b = await add(relu.hash, 1, 'b');
      const c = await add(softmax.hash, 0, 'c');
      const d = await add(relu.hash, 1, 'd');
      await handle.store.recordEvaluation({
        candidateId: b.id,
        result: failedResult('compile_error'),
        gpuSeconds: 0,
        optionsHash: OPTIONS_HASH,
        cacheKey: keyFor('b', relu.hash),
      });
      const listed = await handle.store.listCandidates(run.id, { problemHash: relu.hash });
      assert.deepEqual(
        listed.map((item) => [item.id, item.evaluation?.verdict]),
        [
          [a.id, undefined],
          [b.id, 'compile_error'],
          [d.id, undefined],
        ],
      );
      assert.deepEqual(
        (await handle.store.listCandidates(run.id, { round: 1 })).map((item) => item.id),
        [b.id, d.id],
      );
      assert.deepEqual(
        (await handle.store.pendingWork(run.id)).map((item) => item.id),
        [a.id, c.id, d.id],
      );
      assert.deepEqual(await handle.store.pendingWork('other-run'), []);
    });
  });
}
