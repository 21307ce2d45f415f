import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BudgetUsage } from '../search/state/budget.js';
import { progressLine } from './progress-lines.js';

const usage: BudgetUsage = { candidates: 3, tokens: 1234, costUsd: 0.05, deviceMs: 2500, elapsedMs: 1000, bestSpeedup: 1.5 };
const base = { problem: '01_relu', problemHash: 'a'.repeat(64), usage };

test('each event is one logfmt line with the problem, what happened and the usage so far', () => {
  assert.equal(
    progressLine({ type: 'candidate-evaluated', ...base, candidateId: 7, candidateNumber: 3, verdict: 'correct', speedup: 1.5, deviceMs: 900, reused: false }),
    'event=candidate-evaluated problem=01_relu candidate=7 candidate_number=3 verdict=correct speedup=1.5 reused=false candidates=3 best_speedup=1.5 tokens=1234 cost_usd=0.05 device_s=2.5',
  );
  assert.equal(progressLine({ type: 'run-finished', runId: 'r1', status: 'stopped' }), 'event=run-finished run=r1 status=stopped');
  assert.match(progressLine({ type: 'reply-without-code', ...base, reason: 'The reply contained no code.' }), /reason="The reply contained no code\."/);
});

test('a replay that ran out of replies is its own event, not a failed call; stage events name the candidate and stage', () => {
  const exhausted = progressLine({ type: 'model-exhausted', ...base, message: 'no replies left in /r' });
  assert.equal(
    exhausted,
    'event=model-exhausted problem=01_relu message="no replies left in /r" candidates=3 best_speedup=1.5 tokens=1234 cost_usd=0.05 device_s=2.5',
  );
  assert.match(progressLine({ type: 'model-call-failed', ...base, message: 'HTTP 503' }), /^event=model-call-failed problem=01_relu message="HTTP 503"/);
  assert.equal(
    progressLine({
      type: 'candidate-stage',
      ...base,
      candidateId: 4,
      candidateNumber: 2,
      progress: { kind: 'stage-started', role: 'candidate', stage: 'build' },
    }),
    'event=candidate-stage problem=01_relu candidate=4 candidate_number=2 stage=build role=candidate status=started candidates=3 best_speedup=1.5 tokens=1234 cost_usd=0.05 device_s=2.5',
  );
});
