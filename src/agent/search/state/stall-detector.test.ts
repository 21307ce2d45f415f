import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StallDetector } from './stall-detector.js';

test('a stall is reported after N candidates without improvement, then counting starts again', () => {
  const detector = new StallDetector({ patience: 3, policy: 'continue' });
  assert.equal(detector.observe(false), null);
  assert.equal(detector.observe(true), null, 'an improvement resets the count');
  assert.equal(detector.observe(false), null);
  assert.equal(detector.observe(false), null);
  assert.deepEqual(detector.observe(false), { candidatesWithoutImprovement: 3, policy: 'continue' });
  assert.equal(detector.count, 0);
  assert.equal(detector.observe(false), null);
});

test('a resumed detector continues its count; a bad patience is refused with the value', () => {
  const detector = new StallDetector({ patience: 2, policy: 'pause', sinceImprovement: 1 });
  assert.deepEqual(detector.observe(false), { candidatesWithoutImprovement: 2, policy: 'pause' });
  assert.throws(() => new StallDetector({ patience: 0, policy: 'continue' }), /positive integer, got 0/);
});
