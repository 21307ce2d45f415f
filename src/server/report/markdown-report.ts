import type { ReportGroup, ReportProblem, RunReportData } from '../api-schemas/report-schemas.js';
import { deviceTimeColumn, groupFigures, PROBLEM_FIGURES } from './report-columns.js';
import { DASH, formatShare } from './report-numbers.js';

/** A cell with `|` and line breaks made safe for a Markdown table. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.map(cell).join(' | ')} |`;
  return [line(header), `|${header.map(() => ' --- ').join('|')}|`, ...rows.map(line)].join('\n');
}

/** The problems table's figures, after its problem, level, verdict and candidate. */
const PROBLEM_COLUMNS = [
  PROBLEM_FIGURES.vsEager,
  PROBLEM_FIGURES.vsCompile,
  PROBLEM_FIGURES.vsBest,
  PROBLEM_FIGURES.median,
  PROBLEM_FIGURES.speedOfLight,
  PROBLEM_FIGURES.ownShare,
  PROBLEM_FIGURES.correctOfEvaluated,
  PROBLEM_FIGURES.tokensInOut,
  PROBLEM_FIGURES.cost,
];

function metricsTable(groups: readonly ReportGroup[], backend: string | null): string {
  const fastHeaders = groups[0]?.fastP.map((row) => `fast_${row.p}`) ?? [];
  const figures = groupFigures(backend);
  return table(
    ['level', 'correct', ...fastHeaders, ...figures.map((column) => column.heading)],
    groups.map((group) => [
      group.level,
      `${group.correctProblems}/${group.problems}`,
      ...group.fastP.map((row) => `${formatShare(row.vsEager)} / ${formatShare(row.vsBest)}`),
      ...figures.map((column) => column.cell(group)),
    ]),
  );
}

function problemsTable(problems: readonly ReportProblem[], backend: string | null): string {
  const columns = [...PROBLEM_COLUMNS, deviceTimeColumn<ReportProblem>(backend)];
  return table(
    ['problem', 'level', 'verdict', 'candidate', ...columns.map((column) => column.heading)],
    problems.map((problem) => [
      problem.name,
      problem.level,
      problem.verdict ?? 'not evaluated',
      problem.candidateId === null ? DASH : `#${problem.candidateId}${problem.chosenBy === 'accepted' ? ' (accepted)' : ''}`,
      ...columns.map((column) => column.cell(problem)),
    ]),
  );
}

/**
 * The report as GitHub-flavoured Markdown: the run, the metrics per level and overall, then one
 * row per problem. `fast_p` cells read "vs eager / vs best baseline".
 */
export function renderMarkdownReport(report: RunReportData): string {
  const { run } = report;
  const groups = report.levels.length > 1 ? [...report.levels, report.total] : [report.total];
  const lines = [
    `# kforge report: run ${run.id}`,
    '',
    `- status: **${run.status}**, strategy \`${run.strategy}\`, model \`${run.model}\``,
    `- backend ${run.backend ?? DASH}, precision ${run.precision ?? DASH}, guard policy ${run.guardPolicy ? `\`${run.guardPolicy}\`` : DASH}`,
    `- started ${run.startedAt}${run.finishedAt ? `, finished ${run.finishedAt}` : ''}`,
    `- store \`${report.store}\`, generated ${report.generatedAt}`,
    '',
    '## Metrics',
    '',
    `\`fast_p\`: share of all problems whose reported kernel is correct${run.guardPolicy ? ` under the guard policy \`${run.guardPolicy}\`` : ''} and more than p times faster (vs eager / vs the faster of eager and torch.compile). Geometric means are over correct problems. "own share": the reported kernel's own kernels' share of its traced call's time (attribution).`,
    '',
    metricsTable(groups, run.backend),
    '',
    '## Problems',
    '',
    problemsTable(report.problems, run.backend),
    '',
  ];
  return lines.join('\n');
}
