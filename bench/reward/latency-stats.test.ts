import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { percentile, summarizeLatencies } from './latency-stats.js';

describe('percentile', () => {
  it('is the nearest rank', () => {
    const values = Array.from({ length: 100 }, (_, index) => index + 1);
    assert.deepEqual([percentile(values, 50), percentile(values, 99), percentile(values, 100), percentile(values, 0)], [50, 99, 100, 1]);
    assert.equal(percentile([7], 99), 7);
    assert.equal(percentile([], 50), null);
  });
});

describe('summarizeLatencies', () => {
  it('counts statuses and derives throughput from the wall time', () => {
    const summary = summarizeLatencies([30, 10, 20, 40], [200, 200, 429, 200], 2, 2000);
    assert.deepEqual(summary.statuses, { 200: 3, 429: 1 });
    assert.deepEqual([summary.p50Ms, summary.p99Ms, summary.maxMs, summary.meanMs, summary.throughputPerSecond, summary.retriedBusy], [20, 40, 40, 25, 2, 2]);
  });
});
