import type { ReportGroup, RunReportData } from '../api-schemas/report-schemas.js';
import { DASH, formatCost, formatCount, formatMs, formatSeconds, formatShare, formatSpeedup } from './report-numbers.js';
import { deviceTimeLabel } from './device-time-label.js';

/** A cell with `|` and line breaks made safe for a Markdown table. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.map(cell).join(' | ')} |`;
  return [line(header), `|${header.map(() => ' --- ').join('|')}|`, ...rows.map(line)].join('\n');
}

function groupRows(groups: readonly ReportGroup[]): string[][] {
  return groups.map((group) => [
    group.level,
    `${group.correctProblems}/${group.problems}`,
    ...group.fastP.map((row) => `${formatShare(row.vsEager)} / ${formatShare(row.vsBest)}`),
    formatSpeedup(group.geomeanSpeedupVsEager),
    formatSpeedup(group.geomeanSpeedupVsCompile),
    formatSpeedup(group.geomeanSpeedupVsBest),
    formatShare(group.meanSpeedOfLightShare),
    `${formatCount(group.inputTokens)} / ${formatCount(group.outputTokens)}`,
    formatCost(group.costUsd),
    formatSeconds(group.gpuSeconds),
  ]);
}

/**
 * The report as GitHub-flavoured Markdown: the run, the metrics per level and overall, then one
 * row per problem. `fast_p` cells read "vs eager / vs best baseline".
 */
export function renderMarkdownReport(report: RunReportData): string {
  const { run } = report;
  const groups = report.levels.length > 1 ? [...report.levels, report.total] : [report.total];
  const fastHeaders = report.total.fastP.map((row) => `fast_${row.p}`);
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
    table(
      [
        'level',
        'correct',
        ...fastHeaders,
        'geomean vs eager',
        'vs compile',
        'vs best',
        'speed of light',
        'tokens in / out',
        'cost',
        deviceTimeLabel(run.backend),
      ],
      groupRows(groups),
    ),
    '',
    '## Problems',
    '',
    table(
      [
        'problem',
        'level',
        'verdict',
        'candidate',
        'vs eager',
        'vs compile',
        'vs best',
        'median',
        'speed of light',
        'own share',
        'correct / evaluated',
        'tokens in / out',
        'cost',
        deviceTimeLabel(run.backend),
      ],
      report.problems.map((problem) => [
        problem.name,
        problem.level,
        problem.verdict ?? 'not evaluated',
        problem.candidateId === null ? DASH : `#${problem.candidateId}${problem.chosenBy === 'accepted' ? ' (accepted)' : ''}`,
        formatSpeedup(problem.speedupVsEager),
        formatSpeedup(problem.speedupVsCompile),
        formatSpeedup(problem.speedupVsBest),
        formatMs(problem.medianMs),
        formatShare(problem.speedOfLightShare),
        formatShare(problem.ownShare ?? null),
        `${problem.correct} / ${problem.evaluated}`,
        `${formatCount(problem.inputTokens)} / ${formatCount(problem.outputTokens)}`,
        formatCost(problem.costUsd),
        formatSeconds(problem.gpuSeconds),
      ]),
    ),
    '',
  ];
  return lines.join('\n');
}
