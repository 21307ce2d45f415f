import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mean, median, medianConfidenceInterval, medianConfidenceRanks, sampleStandardDeviation, summarizeTimes } from './statistics.js';
import { computeSpeedups } from './speedup.js';

describe('statistics', () => {
  it('computes median, mean and sample standard deviation', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.equal(mean([1, 2, 3, 4]), 2.5);
    // Sample std of 2,4,4,4,5,5,7,9 is sqrt(32/7).
    assert.ok(Math.abs(sampleStandardDeviation([2, 4, 4, 4, 5, 5, 7, 9]) - Math.sqrt(32 / 7)) < 1e-12);
    assert.equal(sampleStandardDeviation([5]), 0);
  });

  it('picks the binomial order-statistic ranks of the 95% interval of the median', () => {
    // Published tables (e.g. Conover, Practical Nonparametric Statistics): n=100 → 40th and 61st.
    assert.deepEqual(medianConfidenceRanks(100), [40, 61]);
    assert.deepEqual(medianConfidenceRanks(10), [2, 9]);
    assert.deepEqual(medianConfidenceRanks(20), [6, 15]);
    assert.deepEqual(medianConfidenceRanks(6), [1, 6]);
    assert.deepEqual(medianConfidenceRanks(5), [1, 5], 'n=5 cannot reach 95%: the whole range');
    assert.deepEqual(medianConfidenceRanks(1), [1, 1]);
    // Large n stays finite (no underflow of 0.5^n) and near n/2 ± 0.98·sqrt(n).
    const [lower, upper] = medianConfidenceRanks(10_000);
    assert.ok(lower >= 4900 && lower <= 4903, `lower ${lower}`);
    assert.equal(upper, 10_001 - lower);
  });

  it('takes the interval from the sorted values', () => {
    const values = Array.from({ length: 100 }, (_, index) => 100 - index); // 100 … 1, unsorted
    assert.deepEqual(medianConfidenceInterval(values), [40, 61]);
  });

  it('summarizes raw times', () => {
    const stats = summarizeTimes([1, 2, 3, 4, 100]);
    assert.deepEqual(stats, { median: 3, mean: 22, std: stats.std, min: 1, max: 100, ci95: [1, 100], n: 5 });
    assert.ok(Math.abs(stats.std - Math.sqrt((21 ** 2 + 20 ** 2 + 19 ** 2 + 18 ** 2 + 78 ** 2) / 4)) < 1e-9);
  });

  it('refuses empty or non-finite series', () => {
    assert.throws(() => summarizeTimes([]), RangeError);
    assert.throws(() => summarizeTimes([1, Number.NaN]), RangeError);
  });
});

describe('speedups', () => {
  it('divides baseline medians by the candidate median and picks the faster baseline', () => {
    assert.deepEqual(computeSpeedups(0.5, 1.0, 0.8), { vsEager: 2, vsCompile: 1.6, vsBest: 1.6 });
    assert.deepEqual(computeSpeedups(2, 1, 4), { vsEager: 0.5, vsCompile: 2, vsBest: 0.5 });
  });

  it('leaves a missing baseline out', () => {
    assert.deepEqual(computeSpeedups(0.5, 1.0, null), { vsEager: 2, vsCompile: null, vsBest: 2 });
    assert.deepEqual(computeSpeedups(0.5, null, null), { vsEager: null, vsCompile: null, vsBest: null });
  });
});
