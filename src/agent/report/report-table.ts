import { formatTextTable } from '../../core/text-table.js';
import { formatCount, formatShare, formatSignificant, formatSpeedup, formatUsd } from './number-format.js';
import type { SuiteMetrics } from './metrics.js';
import type { RunReport } from './run-report.js';

/** The problem name left-aligned, every figure right-aligned. */
function columns(rows: string[][]): string[] {
  return formatTextTable(rows, { align: rows[0]!.map((_, column) => (column === 0 ? 'left' : 'right')) });
}

function metricLines(metrics: SuiteMetrics): string[] {
  const { eager, compile, best } = metrics.geomeanSpeedup;
  return [
    metrics.fastP.map((entry) => `fast_${entry.p} ${formatShare(entry.share)}`).join('  '),
    `geomean speedup: eager ${formatSpeedup(eager)}, compile ${formatSpeedup(compile)}, best ${formatSpeedup(best)}`,
  ];
}

/**
 * The final report as text: one row per problem (verdict of the best kernel, candidates, best
 * median, speedups against eager, compile and the best baseline, tokens, cost, device time), then
 * the totals with the correct share, `fast_p` at 0, 1, 1.5 and 2 and the geometric means.
 */
export function formatReportTable(report: RunReport): string {
  const header = ['problem', 'best verdict', 'candidates', 'correct', 'best ms', 'vs eager', 'vs compile', 'vs best', 'tokens', 'cost', 'device s'];
  const rows = report.problems.map((problem) => {
    const timing = problem.best?.verdict === 'correct' ? problem.best.result.timing : undefined;
    return [
      problem.name,
      problem.best?.verdict ?? '—',
      String(problem.candidateCount),
      problem.evaluatedCount === 0 ? '—' : `${problem.correctCount}/${problem.evaluatedCount}`,
      timing ? formatSignificant(timing.candidate_ms.median) : '—',
      formatSpeedup(timing?.speedup_vs_eager),
      formatSpeedup(timing?.speedup_vs_compile),
      formatSpeedup(timing?.speedup_vs_best),
      formatCount(problem.usage.tokens),
      formatUsd(problem.usage.costUsd),
      (problem.usage.deviceMs / 1000).toFixed(1),
    ];
  });
  const { metrics, totals } = report;
  return [
    ...columns([header, ...rows]),
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
