import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BudgetTracker } from './budget.js';

test('candidates are reserved up to the limit and a failed call gives its slot back', () => {
  const budget = new BudgetTracker({ maxCandidates: 2 });
  assert.equal(budget.reserveCandidate(), true);
  assert.equal(budget.reserveCandidate(), true);
  assert.equal(budget.reserveCandidate(), false);
  assert.equal(budget.stopReason(), 'candidates');
  budget.releaseCandidate();
  assert.equal(budget.stopReason(), null);
});

test('wall clock, tokens, cost and device seconds each stop the budget', () => {
  let now = 1000;
  const clock = new BudgetTracker({ maxWallMs: 500 }, { now: () => now });
  assert.equal(clock.remainingWallMs(), 500);
  now += 500;
  assert.equal(clock.stopReason(), 'wall-clock');
  const tokens = new BudgetTracker({ maxTokens: 100 });
  tokens.recordModelUsage(99, null);
  assert.equal(tokens.stopReason(), null);
  tokens.recordModelUsage(1, null);
  assert.equal(tokens.stopReason(), 'tokens');
  const cost = new BudgetTracker({ maxCostUsd: 0.5 });
  cost.recordModelUsage(10, 0.5);
  assert.equal(cost.stopReason(), 'cost');
  const device = new BudgetTracker({ maxDeviceSeconds: 2 });
  device.recordDeviceTime(1999);
  assert.equal(device.stopReason(), null);
  device.recordDeviceTime(1);
  assert.equal(device.stopReason(), 'device-seconds');
});

test('the target speedup stops the problem, not the run it draws from', () => {
  const run = new BudgetTracker({ maxTokens: 1000 });
  const problem = new BudgetTracker({ targetSpeedup: 2 }, { parent: run });
  problem.recordSpeedup(1.5);
  assert.equal(problem.stopReason(), null);
  problem.recordSpeedup(2);
  assert.equal(problem.stopReason(), 'target-speedup');
  assert.equal(run.stopReason(), null);
  problem.recordModelUsage(1000, 0);
  assert.equal(run.stopReason(), 'tokens');
  const next = new BudgetTracker({}, { parent: run });
  assert.equal(next.stopReason(), 'tokens', 'a later problem sees the run budget spent');
  assert.equal(next.reserveCandidate(), false);
});

test('usage carried over from a resumed run counts against the limits', () => {
  let now = 0;
  const budget = new BudgetTracker({ maxCandidates: 5, maxWallMs: 1000 }, { now: () => now, spent: { candidates: 4, elapsedMs: 900, tokens: 7 } });
  assert.equal(budget.reserveCandidate(), true);
  assert.equal(budget.reserveCandidate(), false);
  assert.equal(budget.usage().tokens, 7);
  now = 100;
  assert.equal(budget.remainingWallMs(), 0);
});
