import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BudgetUsage } from './budget.js';
import { LiveProgress, progressLine } from './progress-lines.js';

const usage: BudgetUsage = { candidates: 3, tokens: 1234, costUsd: 0.05, deviceMs: 2500, elapsedMs: 1000, bestSpeedup: 1.5 };
const base = { problem: '01_relu', problemHash: 'a'.repeat(64), usage };

test('each event is one logfmt line with the problem, what happened and the usage so far', () => {
  assert.equal(
    progressLine({ type: 'candidate-evaluated', ...base, candidateId: 7, verdict: 'correct', speedup: 1.5, deviceMs: 900, reused: false }),
    'event=candidate-evaluated problem=01_relu candidate=7 verdict=correct speedup=1.5 reused=false candidates=3 best_speedup=1.5 tokens=1234 cost_usd=0.05 device_s=2.5',
  );
  assert.equal(progressLine({ type: 'run-finished', runId: 'r1', status: 'stopped' }), 'event=run-finished run=r1 status=stopped');
  assert.match(progressLine({ type: 'reply-without-code', ...base, reason: 'The reply contained no code.' }), /reason="The reply contained no code\."/);
});

test('the live view keeps one line per problem with candidates, best speedup, tokens and cost', () => {
  const view = new LiveProgress();
  view.update({ type: 'run-started', runId: 'r1', problemCount: 2, resumed: false });
  view.update({ type: 'problem-started', ...base, index: 0, total: 2, strategy: 'refine' });
  view.update({ type: 'candidate-evaluated', ...base, candidateId: 7, verdict: 'correct', speedup: 1.5, deviceMs: 900, reused: false });
  const lines = view.lines();
  assert.equal(lines[0], 'run r1: 2 problems');
  assert.match(lines[1]!, /01_relu\s+refine\s+3 cand\s+best\s+1\.50x\s+1,234 tok\s+\$0\.05\s+#7 correct 1\.50x/);
  view.update({ type: 'problem-finished', ...base, reason: 'target-speedup' });
  view.update({ type: 'run-finished', runId: 'r1', status: 'finished' });
  assert.match(view.lines()[1]!, /done \(target-speedup\)/);
  assert.equal(view.lines()[0], 'run r1: 2 problems — finished');
});
