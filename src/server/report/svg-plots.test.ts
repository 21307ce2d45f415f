import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stepChartSvg, ticks } from './svg-plots.js';

test('a count axis has whole-number ticks however few the candidates', () => {
  for (const max of [1, 2, 3, 7, 13, 240]) {
    const axis = ticks(max, 5, true);
    assert.ok(axis.every(Number.isInteger), `${max}: ${axis.join(', ')}`);
    assert.ok(axis.at(-1)! >= max);
  }
  assert.deepEqual(ticks(2), [0, 0.5, 1, 1.5, 2], 'a speedup axis keeps its fractions');
});

test("the best-so-far chart's candidate axis: two candidates give ticks 0, 1, 2", () => {
  const svg = stepChartSvg(
    [
      {
        label: 'relu',
        color: '#000',
        points: [
          [1, 0.5],
          [2, 1.2],
        ],
      },
    ],
    { title: 't', xLabel: 'candidates evaluated', yUnit: 'x', xIntegers: true },
  );
  const labels = [...svg.matchAll(/text-anchor="middle" fill="#57606a">([^<]+)</g)].map((match) => match[1]);
  assert.deepEqual(
    labels.filter((label) => /^[\d.]+$/.test(label!)),
    ['0', '1', '2'],
  );
});
