import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { correctResult, failedResult } from '../../evaluation-results.js';
import type { EvaluationResult } from '../../../src/core/verdict.js';
import { seedRun, useFreshStore, type OpenEmptyStore } from './conformance-setup.js';

/**
 * The RunStore conformance suite's part on run summaries (run-store-conformance.ts runs every part).
 *
 * Longer than convention 4's 60 lines: a suite is a list of tests, one `it` each, read top to
 * bottom; a function per test would only move them apart.
 */
export function describeSummaries(open: OpenEmptyStore): void {
  describe('run summaries', () => {
    const handle = useFreshStore(open);

    it('sums tokens, cost and GPU time and picks each problem’s best candidate and verdict', async () => {
      const { run, relu, softmax } = await seedRun(handle.store);
      const store = handle.store;
      const evaluate = async (problemHash: string, source: string, result: EvaluationResult, gpuSeconds: number) => {
        const candidate = await store.addCandidate({ runId: run.id, problemHash, round: 0, source, origin: 'model' });
        await store.recordEvaluation({ candidateId: candidate.id, result, gpuSeconds, optionsHash: 'o', cacheKey: `key-${source}` });
        return candidate;
      };
      await evaluate(relu.hash, 'slow', correctResult(2, { eagerMs: 3, compileMs: 4 }), 1.5);
      const fastest = await evaluate(relu.hash, 'fast', correctResult(1, { eagerMs: 3, compileMs: 2 }), 2);
      await evaluate(relu.hash, 'wrong', failedResult('incorrect'), 0.5);
      await evaluate(softmax.hash, 'broken', failedResult('compile_error'), 0);
      await evaluate(softmax.hash, 'crash', failedResult('runtime_error'), 0.25);
      await store.addCandidate({ runId: run.id, problemHash: softmax.hash, round: 1, source: 'pending', origin: 'model' });
      const call = { runId: run.id, model: 'fake:model', messages: [] };
      await store.recordModelCall({ ...call, problemHash: relu.hash, inputTokens: 100, outputTokens: 10, costUsd: 0.5 });
      await store.recordModelCall({ ...call, problemHash: relu.hash, inputTokens: 50, outputTokens: 5 });
      await store.recordModelCall({ ...call, problemHash: softmax.hash, inputTokens: 7, outputTokens: 3 });
      await store.recordModelCall({ ...call, inputTokens: 1000, outputTokens: 1, costUsd: 0.25 });
      await store.recordEvent({ runId: run.id, problemHash: softmax.hash, type: 'problem-stalled' });

      const summary = await store.getRunSummary(run.id);
      assert.ok(summary);
      const [reluSummary, softmaxSummary] = summary.problems;
      assert.deepEqual(reluSummary, {
        problemHash: relu.hash,
        name: '19_ReLU',
        candidates: 3,
        evaluated: 3,
        correct: 2,
        correctShare: 2 / 3,
        bestVerdict: 'correct',
        bestCandidateId: fastest.id,
        bestSpeedupVsEager: 3,
        bestSpeedupVsCompile: 2,
        bestSpeedupVsBest: 2,
        bestCandidateMedianMs: 1,
        modelCalls: 2,
        inputTokens: 150,
        outputTokens: 15,
        costUsd: 0.5,
        gpuSeconds: 4,
        events: 6,
      });
      assert.deepEqual(softmaxSummary, {
        problemHash: softmax.hash,
        name: '23_Softmax',
        candidates: 3,
        evaluated: 2,
        correct: 0,
        correctShare: 0,
        bestVerdict: 'runtime_error',
        bestCandidateId: null,
        bestSpeedupVsEager: null,
        bestSpeedupVsCompile: null,
        bestSpeedupVsBest: null,
        bestCandidateMedianMs: null,
        modelCalls: 1,
        inputTokens: 7,
        outputTokens: 3,
        costUsd: null,
        gpuSeconds: 0.25,
        events: 6,
      });
      assert.deepEqual(summary.totals, {
        problems: 2,
        problemsSolved: 1,
        candidates: 6,
        evaluated: 5,
        correct: 2,
        correctShare: 0.4,
        bestSpeedupVsBest: 2,
        modelCalls: 4,
        inputTokens: 1157,
        outputTokens: 19,
        costUsd: 0.75,
        gpuSeconds: 4.25,
        events: 13,
      });
      assert.deepEqual((await store.listRuns())[0], summary);
    });

    it('summarises a run with no work as zeros and nulls', async () => {
      const { run } = await seedRun(handle.store);
      const summary = await handle.store.getRunSummary(run.id);
      assert.deepEqual(summary?.totals, {
        problems: 2,
        problemsSolved: 0,
        candidates: 0,
        evaluated: 0,
        correct: 0,
        correctShare: null,
        bestSpeedupVsBest: null,
        modelCalls: 0,
        inputTokens: 0,
        outputTokens: 0,
        costUsd: null,
        gpuSeconds: 0,
        events: 1,
      });
      assert.equal(await handle.store.getRunSummary('nope'), undefined);
    });
  });
}
