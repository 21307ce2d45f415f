import { fitTextTable, type FittedColumn } from '../../core/fitted-text-table.js';
import { formatCount, formatShare, formatSignificant, formatSpeedup, formatUsd } from '../../core/number-format.js';
import type { SuiteMetrics } from './metrics.js';
import type { RunReport } from './run-report.js';

function metricLines(metrics: SuiteMetrics): string[] {
  const { eager, compile, best } = metrics.geomeanSpeedup;
  return [
    metrics.fastP.map((entry) => `fast_${entry.p} ${formatShare(entry.share)}`).join('  '),
    `geomean speedup: eager ${formatSpeedup(eager)}, compile ${formatSpeedup(compile)}, best ${formatSpeedup(best)}`,
  ];
}

/** Options of {@link formatReportTable}. */
export interface ReportTableOptions {
  /**
   * The width the table must fit, in character cells (a terminal's columns; 80 when the output is
   * not a terminal). Default: no limit, every column with its full header.
   */
  widthColumns?: number;
}

/** Names longer than this are cut before any column is dropped; never below the minimum. */
const NAME_CELLS = { preferredWidth: 28, minWidth: 12 } as const;

function problemColumns(report: RunReport): FittedColumn[] {
  const cells = (cell: (problem: RunReport['problems'][number]) => string): string[] => report.problems.map(cell);
  const timing = (problem: RunReport['problems'][number]) => (problem.best?.verdict === 'correct' ? problem.best.result.timing : undefined);
  const right = 'right' as const;
  return [
    { header: 'problem', cells: cells((problem) => problem.name), truncate: NAME_CELLS },
    { header: 'best verdict', shortHeader: 'verdict', cells: cells((problem) => problem.best?.verdict ?? '—'), align: right },
    { header: 'candidates', shortHeader: 'cand', cells: cells((problem) => String(problem.candidateCount)), align: right, dropOrder: 2 },
    {
      header: 'correct',
      cells: cells((problem) => (problem.evaluatedCount === 0 ? '—' : `${problem.correctCount}/${problem.evaluatedCount}`)),
      align: right,
    },
    {
      header: 'best ms',
      shortHeader: 'ms',
      cells: cells((problem) => {
        const best = timing(problem);
        return best ? formatSignificant(best.candidate_ms.median) : '—';
      }),
      align: right,
      dropOrder: 1,
    },
    { header: 'vs eager', shortHeader: 'eager', cells: cells((problem) => formatSpeedup(timing(problem)?.speedup_vs_eager)), align: right },
    { header: 'vs compile', shortHeader: 'compile', cells: cells((problem) => formatSpeedup(timing(problem)?.speedup_vs_compile)), align: right, dropOrder: 0 },
    { header: 'vs best', shortHeader: 'best', cells: cells((problem) => formatSpeedup(timing(problem)?.speedup_vs_best)), align: right },
    { header: 'tokens', cells: cells((problem) => formatCount(problem.usage.tokens)), align: right, dropOrder: 4 },
    { header: 'cost', cells: cells((problem) => formatUsd(problem.usage.costUsd)), align: right, dropOrder: 3 },
    { header: 'device s', shortHeader: 'dev s', cells: cells((problem) => (problem.usage.deviceMs / 1000).toFixed(1)), align: right, dropOrder: 5 },
  ];
}

/**
 * The final report as text: one row per problem (verdict of the best kernel, candidates, best
 * median, speedups against eager, compile and the best baseline, tokens, cost, device time), then
 * the totals with the correct share, `fast_p` at 0, 1, 1.5 and 2 and the geometric means. Fitted
 * to `widthColumns`: short headers, then without a column that holds nothing (`vs compile` where
 * PyTorch has no torch.compile), long names cut, then without device time, tokens, cost,
 * candidates and the best median, in that order (the totals below keep them).
 */
export function formatReportTable(report: RunReport, options: ReportTableOptions = {}): string {
  const { metrics, totals } = report;
  return [
    ...fitTextTable(problemColumns(report), options.widthColumns ?? Number.POSITIVE_INFINITY),
    '',
    `run ${report.runId} ${report.status}: ${metrics.correctCount} of ${metrics.problemCount} problems correct (${formatShare(metrics.correctShare)})`,
    ...metricLines(metrics),
    ...report.levels.flatMap(({ level, metrics: ofLevel }) => [
      `${level}: ${ofLevel.correctCount} of ${ofLevel.problemCount} correct (${formatShare(ofLevel.correctShare)})`,
      ...metricLines(ofLevel).map((line) => `  ${line}`),
    ]),
    `${formatCount(totals.candidates)} candidates, ${formatCount(totals.tokens)} tokens, ${formatUsd(totals.costUsd)}, device time ${(totals.deviceMs / 1000).toFixed(1)} s`,
  ].join('\n');
}
