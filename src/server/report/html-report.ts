import { VERDICTS } from '../../core/verdict.js';
import type { ReportGroup, ReportProblem, RunReportData } from '../api-schemas/report-schemas.js';
import { deviceTimeColumn, groupFigures, PROBLEM_FIGURES } from './report-columns.js';
import { DASH, formatShare } from './report-numbers.js';
import { barChartSvg, escapeXml, stackedBarSvg, stepChartSvg } from './svg-plots.js';
import { VERDICT_COLORS, verdictLabel } from './verdict-colors.js';

/** Categorical colours for one line per problem (Tableau 10). */
const SERIES_COLORS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

/** Most problems drawn in the best-so-far chart; the report's tables list them all. */
const MAX_SERIES = 10;

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2328;max-width:1240px;margin:24px auto;padding:0 20px}
.scroll{overflow-x:auto}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
.meta{color:#57606a;margin:0 0 12px}table{border-collapse:collapse;width:100%;margin:8px 0}
th,td{border-bottom:1px solid #eaeef2;padding:5px 6px;font-size:13px;text-align:right;white-space:nowrap}th{background:#f6f8fa;font-weight:600;white-space:normal;vertical-align:bottom}
td:first-child,th:first-child{text-align:left}td:first-child{white-space:normal;overflow-wrap:anywhere;min-width:12ch}.verdict{display:inline-block;padding:0 6px;border-radius:10px;color:#fff;font-size:12px}
.note{color:#57606a;font-size:13px}figure{margin:16px 0}code{background:#f6f8fa;padding:1px 4px;border-radius:4px}
@media print{body{margin:0}}`;

const verdictChip = (verdict: (typeof VERDICTS)[number] | null): string =>
  verdict === null ? DASH : `<span class="verdict" style="background:${VERDICT_COLORS[verdict]}">${escapeXml(verdictLabel(verdict))}</span>`;

function htmlTable(header: string[], rows: string[][]): string {
  return `<div class="scroll"><table><thead><tr>${header.map((title) => `<th>${escapeXml(title)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((row) => `<tr>${row.map((value) => `<td>${value}</td>`).join('')}</tr>`)
    .join('')}</tbody></table></div>`;
}

function metricsTable(groups: readonly ReportGroup[], backend: string | null): string {
  const fastHeaders = groups[0]?.fastP.map((row) => `fast_${row.p}`) ?? [];
  const figures = groupFigures(backend);
  return htmlTable(
    ['level', 'correct', ...fastHeaders, ...figures.map((column) => column.heading)],
    groups.map((group) => [
      escapeXml(group.level),
      `${group.correctProblems}/${group.problems}`,
      ...group.fastP.map((row) => `${formatShare(row.vsEager)} <span class="note">/ ${formatShare(row.vsBest)}</span>`),
      ...figures.map((column) => column.cell(group)),
    ]),
  );
}

/** The problems table's figures, after its problem, level, verdict and candidate. */
const PROBLEM_COLUMNS = [
  PROBLEM_FIGURES.vsEager,
  PROBLEM_FIGURES.vsCompile,
  PROBLEM_FIGURES.vsBest,
  PROBLEM_FIGURES.median,
  PROBLEM_FIGURES.eager,
  PROBLEM_FIGURES.compile,
  PROBLEM_FIGURES.speedOfLight,
  PROBLEM_FIGURES.ownShare,
  PROBLEM_FIGURES.correctOfEvaluated,
  PROBLEM_FIGURES.tokens,
  PROBLEM_FIGURES.cost,
];

function problemsTable(problems: readonly ReportProblem[], backend: string | null): string {
  const columns = [...PROBLEM_COLUMNS, deviceTimeColumn<ReportProblem>(backend)];
  return htmlTable(
    ['problem', 'level', 'verdict', 'candidate', ...columns.map((column) => column.heading)],
    problems.map((problem) => [
      escapeXml(problem.name),
      escapeXml(problem.level),
      verdictChip(problem.verdict),
      problem.candidateId === null ? DASH : `#${problem.candidateId}${problem.chosenBy === 'accepted' ? ' <span class="note">accepted</span>' : ''}`,
      ...columns.map((column) => column.cell(problem)),
    ]),
  );
}

function plots(report: RunReportData): string {
  const speedups = barChartSvg(
    report.problems.map((problem) => ({
      label: problem.name,
      value: problem.speedupVsBest,
      color: problem.speedupVsBest !== null && problem.speedupVsBest >= 1 ? VERDICT_COLORS.correct : '#bf8700',
      note: problem.verdict === null ? 'not evaluated' : problem.verdict === 'correct' ? 'no timing' : `no correct kernel (${verdictLabel(problem.verdict)})`,
    })),
    { title: 'Reported kernel: speedup over the best baseline (dashed: 1x)', unit: 'x', reference: 1 },
  );
  const drawn = report.problems.filter((problem) => problem.bestSoFar.length > 0).slice(0, MAX_SERIES);
  const progress =
    drawn.length === 0
      ? ''
      : stepChartSvg(
          drawn.map((problem, index) => ({
            label: problem.name,
            color: SERIES_COLORS[index % SERIES_COLORS.length] ?? '#4e79a7',
            points: problem.bestSoFar.map((point) => [point.evaluated, point.speedup] as const),
          })),
          { title: 'Best speedup so far (vs best baseline) against candidates evaluated', xLabel: 'candidates evaluated', yUnit: 'x', xIntegers: true },
        );
  const groups = report.levels.length > 1 ? [...report.levels, report.total] : [report.total];
  const verdicts = stackedBarSvg(
    groups.map((group) => ({
      label: group.level,
      segments: VERDICTS.map((verdict) => ({ label: verdictLabel(verdict), value: group.verdictCounts[verdict], color: VERDICT_COLORS[verdict] })),
    })),
    { title: 'Verdicts of every evaluated candidate' },
  );
  const omitted = report.problems.filter((problem) => problem.bestSoFar.length > 0).length - drawn.length;
  return (
    [speedups, progress, verdicts]
      .filter(Boolean)
      .map((svg) => `<figure>${svg}</figure>`)
      .join('') + (omitted > 0 ? `<p class="note">The progress chart shows the first ${MAX_SERIES} problems; ${omitted} more are in the table.</p>` : '')
  );
}

/**
 * The report as one self-contained HTML file: inline style and SVG plots, no script, nothing
 * fetched. Opens from disk, prints, and can be mailed as it is.
 */
export function renderHtmlReport(report: RunReportData): string {
  const { run } = report;
  const groups = report.levels.length > 1 ? [...report.levels, report.total] : [report.total];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>kforge report: ${escapeXml(run.id)}</title><style>${STYLE}</style></head>
<body>
<h1>kforge report: run ${escapeXml(run.id)}</h1>
<p class="meta">${escapeXml(run.status)} · strategy <code>${escapeXml(run.strategy)}</code> · model <code>${escapeXml(run.model)}</code> · backend ${escapeXml(run.backend ?? DASH)} · precision ${escapeXml(run.precision ?? DASH)} · guard policy ${escapeXml(run.guardPolicy ?? DASH)} (fast_p counts verdicts under it)<br>
started ${escapeXml(run.startedAt)}${run.finishedAt ? ` · finished ${escapeXml(run.finishedAt)}` : ''} · generated ${escapeXml(report.generatedAt)} from <code>${escapeXml(report.store)}</code></p>
<h2>Metrics</h2>
<p class="note"><code>fast_p</code>: the share of all problems (failures included) whose reported kernel is correct and more than p times faster than eager, then (after the slash) than the faster of eager and torch.compile. Geometric means are over correct problems. Speed of light: the problem's roofline bound over the kernel's median time, where the evaluator measured one.</p>
${metricsTable(groups, run.backend)}
<h2>Plots</h2>
${plots(report)}
<h2>Problems</h2>
<p class="note">Each problem reports the kernel a person accepted, else the fastest correct one.</p>
${problemsTable(report.problems, run.backend)}
</body></html>
`;
}
