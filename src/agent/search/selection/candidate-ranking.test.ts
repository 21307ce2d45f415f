import assert from 'node:assert/strict';
import { test } from 'node:test';
import { combineShapeResults } from '../../../eval/problem/shape-sweep-result.js';
import { correctResult } from '../../../../test-support/fake-evaluator.js';
import { isImprovement, medianMs } from './candidate-ranking.js';

const SHAPES = [
  { index: 0, values: { M: 4096 }, overrides: { M: 4096 }, unused: [] },
  { index: 1, values: { M: 32 }, overrides: { M: 32 }, unused: [] },
];

/** A correct sweep whose shapes ran in these medians. */
function sweep(medians: [number, number]) {
  return combineShapeResults(SHAPES.map((shape, index) => ({ shape, overrides: shape.overrides, result: correctResult({ medianMs: medians[index]! }) })));
}

test("a problem folder's candidates are ranked by the geometric mean of their shapes' medians, never by the first shape alone", () => {
  assert.equal(medianMs(sweep([1, 4])), 2);
  assert.equal(medianMs(correctResult({ medianMs: 3 })), 3);
  // Faster at the first shape, much slower at the second: not an improvement.
  assert.equal(isImprovement(sweep([0.5, 16]), sweep([1, 4]), 0.01), false);
  assert.equal(isImprovement(sweep([1, 1]), sweep([1, 4]), 0.01), true);
});
