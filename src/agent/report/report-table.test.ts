import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileErrorResult, correctResult } from '../../../test-support/fake-evaluator.js';
import type { EvaluationResult } from '../../core/verdict.js';
import { formatReportTable } from './report-table.js';
import { buildRunReport, type ProblemReport } from './run-report.js';

function problem(name: string, result: EvaluationResult | null, tokens = 48_213): ProblemReport {
  return {
    name,
    path: `/kb/level1/${name}.py`,
    hash: name.padEnd(64, '0'),
    candidateCount: 12,
    evaluatedCount: 11,
    correctCount: result?.verdict === 'correct' ? 7 : 0,
    best: result ? { candidateId: 1, verdict: result.verdict, result, kernelPath: `/out/${name}.py`, verdictPath: `/out/${name}.verdict.json` } : null,
    usage: { candidates: 12, tokens, costUsd: 1.37, deviceMs: 612_400, elapsedMs: 0, bestSpeedup: null },
    endReason: 'candidates',
  };
}

/** KernelBench's names as a run over its level 1 shows them, on PyTorch 1.13 (no torch.compile) or 2.x. */
function kernelBenchReport(compileMs: number | null) {
  return buildRunReport('20261207-060937-f7f4af', 'finished', [
    problem('1_Square_matrix_multiplication_', correctResult({ medianMs: 14.4, eagerMs: 19.2, compileMs })),
    problem('82_conv_depthwise_2D_square_input_square_kernel', compileErrorResult()),
    problem('19_ReLU', correctResult({ medianMs: 0.0421, eagerMs: 0.0612, compileMs })),
  ]);
}

const widest = (text: string): number => Math.max(...text.split('\n').map((line) => line.length));

test('the table keeps every column with its full header where the width allows', () => {
  const table = formatReportTable(kernelBenchReport(12.5), { widthColumns: 200 });
  assert.match(table, /^problem\s+best verdict\s+candidates\s+correct\s+best ms\s+vs eager\s+vs compile\s+vs best\s+tokens\s+cost\s+device s$/m);
  assert.match(table, /82_conv_depthwise_2D_square_input_square_kernel\s+compile_error/);
  assert.ok(widest(table) > 120, 'it is wider than a terminal');
  assert.equal(formatReportTable(kernelBenchReport(12.5)), table, 'no width: no limit');
});

test('at 80 columns every line fits: short headers, the empty vs-compile column out, long names cut, the least needed columns dropped', () => {
  const table = formatReportTable(kernelBenchReport(null), { widthColumns: 80 });
  assert.ok(widest(table) <= 80, `${widest(table)} columns:\n${table}`);
  const [header, ...rows] = table.split('\n');
  assert.doesNotMatch(header!, /compile/, 'PyTorch 1.13 has no torch.compile: a column of dashes is the first to go');
  assert.match(header!, /^problem\s+verdict\s+.*correct\s+.*eager\s+best/);
  assert.match(rows[0]!, /^1_Square_matrix_multiplicat…\s+correct\s+.*7\/11\s+.*1\.33x\s+1\.33x$/, 'a long name is cut where it would not fit');
  assert.match(rows[1]!, /^82_conv_depthwise_2D_square…\s+compile_error/);
  assert.match(rows[2]!, /^19_ReLU\s+correct/);
  assert.match(table, /geomean speedup: eager /, 'the totals follow');
  assert.match(table, /device time 1837\.2 s/, 'the totals keep what the columns dropped');
});

test('a narrow terminal still gets the name, the verdict and the speedups, within its width', () => {
  for (const width of [60, 72, 100]) {
    const table = formatReportTable(kernelBenchReport(12.5), { widthColumns: width });
    const [header, ...rows] = table.split('\n');
    const lines = [header!, ...rows.slice(0, 3)];
    assert.ok(
      lines.every((line) => line.length <= width),
      `${width}:\n${table}`,
    );
    for (const kept of [/^problem /, / verdict /, / eager /, / best\b/]) assert.match(header!, kept, `${width}: ${header}`);
  }
});
