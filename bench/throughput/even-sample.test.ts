import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evenlySpaced } from './batch-runs.js';

describe('evenlySpaced (the one-process way on part of the batch)', () => {
  const batch = Array.from({ length: 24 }, (_, index) => `c${index}`);

  it('takes every k-th candidate from the first, so each problem and variant is represented in order', () => {
    assert.deepEqual(evenlySpaced(batch, 6), ['c0', 'c4', 'c8', 'c12', 'c16', 'c20']);
    assert.deepEqual(evenlySpaced(batch, 5), ['c0', 'c4', 'c9', 'c14', 'c19']);
  });

  it('keeps the whole batch when no sample size is given or it is not smaller', () => {
    assert.deepEqual(evenlySpaced(batch, undefined), batch);
    assert.deepEqual(evenlySpaced(batch, 30), batch);
  });
});
