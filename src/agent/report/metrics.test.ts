import assert from 'node:assert/strict';
import { test } from 'node:test';
import { computeSuiteMetrics, fastP, geometricMean, type ProblemOutcome } from './metrics.js';

function correct(speedupVsEager: number, speedupVsCompile: number | null = null): ProblemOutcome {
  const best = speedupVsCompile === null ? speedupVsEager : Math.min(speedupVsEager, speedupVsCompile);
  return { verdict: 'correct', speedupVsEager, speedupVsCompile, speedupVsBest: best };
}

const failed = (verdict: ProblemOutcome['verdict']): ProblemOutcome => ({ verdict, speedupVsEager: null, speedupVsCompile: null, speedupVsBest: null });

test('fast_p counts over all problems, failures in the denominator only', () => {
  const outcomes = [correct(0.5), correct(1.2), correct(1.5), correct(3), failed('compile_error'), failed(null), failed('incorrect'), correct(2)];
  assert.equal(fastP(outcomes, 0), 5 / 8);
  assert.equal(fastP(outcomes, 1), 4 / 8);
  assert.equal(fastP(outcomes, 1.5), 2 / 8, 'strictly greater than p: 1.5 itself does not count');
  assert.equal(fastP(outcomes, 2), 1 / 8);
  assert.equal(fastP([], 1), 0);
});

test('fast_p against another baseline reads that speedup', () => {
  const outcomes = [correct(4, 0.9), correct(4, 1.1)];
  assert.equal(fastP(outcomes, 1, 'eager'), 1);
  assert.equal(fastP(outcomes, 1, 'compile'), 0.5);
});

test('the geometric mean is over correct problems only, per baseline', () => {
  const metrics = computeSuiteMetrics([correct(2, 1), correct(8, 4), failed('runtime_error'), correct(0.5, null)]);
  assert.equal(metrics.problemCount, 4);
  assert.equal(metrics.correctCount, 3);
  assert.equal(metrics.correctShare, 0.75);
  assert.ok(Math.abs(metrics.geomeanSpeedup.eager! - 2) < 1e-12, 'cube root of 2 * 8 * 0.5');
  assert.ok(Math.abs(metrics.geomeanSpeedup.compile! - 2) < 1e-12, 'sqrt of 1 * 4; the problem without compile is left out');
  assert.ok(Math.abs(metrics.geomeanSpeedup.best! - Math.cbrt(2)) < 1e-12, 'cube root of 1 * 4 * 0.5');
  assert.deepEqual(
    metrics.fastP.map((entry) => entry.p),
    [0, 1, 1.5, 2],
  );
  assert.deepEqual(
    metrics.fastP.map((entry) => entry.share),
    [0.75, 0.5, 0.5, 0.25],
  );
});

test('an empty or all-failed suite has no geometric mean and zero shares', () => {
  const metrics = computeSuiteMetrics([failed('crashed')]);
  assert.equal(metrics.geomeanSpeedup.eager, null);
  assert.equal(metrics.correctShare, 0);
  assert.equal(geometricMean([]), null);
  assert.ok(Math.abs(geometricMean([1e300, 1e300, 1e300])! / 1e300 - 1) < 1e-9, 'no overflow through the product');
});
