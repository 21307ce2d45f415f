import { formatCount, formatShare, formatSignificant, formatSpeedup, formatUsd } from './number-format.js';
import type { RunReport } from './run-report.js';

function columns(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows.map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ').trimEnd());
}

/**
 * The final report as text: one row per problem (verdict of the best kernel, candidates, best
 * median, speedups against eager, compile and the best baseline, tokens, cost, device time), then
 * the totals with the correct share, `fast_p` at 0, 1, 1.5 and 2 and the geometric means.
 */
export function formatReportTable(report: RunReport): string {
  const header = ['problem', 'best verdict', 'candidates', 'best ms', 'vs eager', 'vs compile', 'vs best', 'tokens', 'cost', 'device s'];
  const rows = report.problems.map((problem) => {
    const timing = problem.best?.verdict === 'correct' ? problem.best.result.timing : undefined;
    return [
      problem.name,
      problem.best?.verdict ?? '—',
      String(problem.candidateCount),
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
  const fast = metrics.fastP.map((entry) => `fast_${entry.p} ${formatShare(entry.share)}`).join('  ');
  const geomean = `geomean speedup: eager ${formatSpeedup(metrics.geomeanSpeedup.eager)}, compile ${formatSpeedup(metrics.geomeanSpeedup.compile)}, best ${formatSpeedup(metrics.geomeanSpeedup.best)}`;
  return [
    ...columns([header, ...rows]),
    '',
    `run ${report.runId} ${report.status}: ${metrics.correctCount} of ${metrics.problemCount} problems correct (${formatShare(metrics.correctShare)})`,
    fast,
    geomean,
    `${formatCount(totals.candidates)} candidates, ${formatCount(totals.tokens)} tokens, ${formatUsd(totals.costUsd)}, device time ${(totals.deviceMs / 1000).toFixed(1)} s`,
  ].join('\n');
}
