import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileErrorResult, correctResult } from '../../../test-support/fake-evaluator.js';
import type { EvaluationResult } from '../../core/verdict.js';
import { formatReportTable } from './report-table.js';
import { buildRunReport, toJsonOutput, type ProblemReport } from './run-report.js';

function problem(file: string, result: EvaluationResult | null, tokens = 100): ProblemReport {
  const name = file.split('/').at(-1)!.replace('.py', '');
  return {
    name,
    path: file,
    hash: name.padEnd(64, '0'),
    candidateCount: result ? 2 : 0,
    evaluatedCount: result ? 2 : 0,
    correctCount: result?.verdict === 'correct' ? 1 : 0,
    best: result ? { candidateId: 1, verdict: result.verdict, result, kernelPath: `/out/${name}.py`, verdictPath: `/out/${name}.verdict.json` } : null,
    usage: { candidates: 2, tokens, costUsd: 0.01, deviceMs: 1500, elapsedMs: 0, bestSpeedup: null },
    endReason: 'candidates',
  };
}

test('a run over two levels reports each level and the whole suite, failures and empty problems included', () => {
  const report = buildRunReport('run-1', 'finished', [
    problem('/kb/level1/1_a.py', correctResult({ medianMs: 0.25 })),
    problem('/kb/level1/2_b.py', compileErrorResult()),
    problem('/kb/level2/1_c.py', correctResult({ medianMs: 0.5, compileMs: 0.25 })),
    problem('/kb/level2/2_d.py', null),
  ]);
  assert.equal(report.metrics.correctShare, 0.5);
  assert.deepEqual(
    report.metrics.fastP.map((entry) => entry.share),
    [0.5, 0.5, 0.5, 0.25],
  );
  assert.ok(Math.abs(report.metrics.geomeanSpeedup.eager! - Math.sqrt(8)) < 1e-9);
  assert.deepEqual(
    report.levels.map((level) => [level.level, level.metrics.correctShare]),
    [
      ['level1', 0.5],
      ['level2', 0.5],
    ],
  );
  assert.deepEqual(report.totals, { candidates: 6, tokens: 400, costUsd: 0.04, deviceMs: 6000 });
  const table = formatReportTable(report);
  assert.match(table, /level2: 1 of 2 correct \(50%\)\n {2}fast_0 50% {2}fast_1 50% {2}fast_1\.5 50% {2}fast_2 0%/);
  assert.match(table, /2_d\s+—\s+0\s+—/);
  assert.match(table, /6 candidates, 400 tokens, \$0\.04, device time 6\.0 s/);
  const json = toJsonOutput(report);
  assert.equal(json.problems[3]!.best, null);
  assert.equal(json.problems[1]!.best?.verdict, 'compile_error');
});
