import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BudgetUsage } from '../search/state/budget.js';
import { RunProgress } from './run-progress.js';

const usage: BudgetUsage = { candidates: 3, tokens: 1234, costUsd: 0.05, deviceMs: 2500, elapsedMs: 1000, bestSpeedup: 1.5 };
const base = { problem: '01_relu', problemHash: 'a'.repeat(64), usage };

test('a problem row follows its stage from the model call through each evaluation stage to its end', () => {
  let now = 1_000;
  const progress = new RunProgress(() => now);
  progress.update({ type: 'run-started', runId: 'r1', problemCount: 2, resumed: false });
  progress.update({ type: 'problem-started', ...base, index: 0, total: 2, strategy: 'refine' });
  assert.equal(progress.snapshot().problems[0]!.stage, 'refine');
  progress.update({ type: 'model-called', ...base });
  assert.equal(progress.snapshot().problems[0]!.stage, 'asking the model');
  progress.update({ type: 'model-replied', ...base, tokens: 0, costUsd: 0, latencyMs: 3 });
  assert.equal(progress.snapshot().problems[0]!.stage, 'reading the reply');
  // Store id 7, the problem's third reply: the row names it #3, as the candidate count (3) does.
  progress.update({ type: 'candidate-submitted', ...base, candidateId: 7, candidateNumber: 3 });
  assert.equal(progress.snapshot().problems[0]!.stage, 'starting #3', 'waiting for a worker is not reading the reply');
  now = 2_000;
  progress.update({
    type: 'candidate-stage',
    ...base,
    candidateId: 7,
    candidateNumber: 3,
    progress: { kind: 'stage-started', role: 'candidate', stage: 'build' },
  });
  const building = progress.snapshot().problems[0]!;
  assert.equal(building.stage, 'building #3');
  assert.equal(building.usageAtMs, 2_000);
  progress.update({
    type: 'candidate-stage',
    ...base,
    candidateId: 7,
    candidateNumber: 3,
    progress: { kind: 'stage-started', role: 'candidate', stage: 'timing' },
  });
  assert.equal(progress.snapshot().problems[0]!.stage, 'timing #3');
  progress.update({ type: 'candidate-evaluated', ...base, candidateId: 7, candidateNumber: 3, verdict: 'correct', speedup: 1.5, deviceMs: 900, reused: false });
  assert.equal(progress.snapshot().problems[0]!.last, '#3 correct 1.50x');
  assert.equal(progress.snapshot().problems[0]!.stage, 'evaluated #3');
  progress.update({ type: 'problem-finished', ...base, reason: 'target-speedup' });
  const done = progress.snapshot().problems[0]!;
  assert.equal(done.status, 'done');
  assert.equal(done.stage, 'done: target reached');
  progress.update({ type: 'run-finished', runId: 'r1', status: 'finished' });
  assert.equal(progress.snapshot().status, 'finished');
  assert.equal(progress.snapshot().total, 2);
});

test('replies that ran out read as such, never as a failed model call, and leave the last verdict in view; a real failure says what failed', () => {
  const progress = new RunProgress();
  progress.update({ type: 'problem-started', ...base, index: 0, total: 1, strategy: 'refine' });
  progress.update({
    type: 'candidate-evaluated',
    ...base,
    candidateId: 12,
    candidateNumber: 2,
    verdict: 'crashed',
    speedup: null,
    deviceMs: 40,
    reused: false,
  });
  progress.update({ type: 'model-exhausted', ...base, message: 'The folder /r has no replies left.' });
  assert.equal(progress.snapshot().problems[0]!.stage, 'no replies left');
  progress.update({ type: 'problem-finished', ...base, reason: 'model-exhausted' });
  const row = progress.snapshot().problems[0]!;
  assert.equal(row.last, '#2 crashed', "the crashed candidate's verdict stays");
  assert.equal(row.stage, 'done: no replies left');
  assert.doesNotMatch(`${row.stage} ${row.last}`, /model call failed/);
  const other = new RunProgress();
  other.update({ type: 'model-call-failed', ...base, message: 'HTTP 503' });
  assert.equal(other.snapshot().problems[0]!.last, 'model call failed: HTTP 503');
});
