import { VERDICTS } from '../../core/verdict.js';
import type { ReportGroup, ReportProblem, RunReportData } from '../api-schemas/report-schemas.js';

/** RFC 4180 field: quoted when it holds a comma, quote or line break. */
function field(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const FAST_P = ['0', '1', '1.5', '2'];

/** Columns, in order; a problem row leaves the group columns empty and the other way round. */
const COLUMNS = [
  'run_id',
  'scope',
  'level',
  'problem',
  'problem_hash',
  'verdict',
  'candidate_id',
  'chosen_by',
  'speedup_vs_eager',
  'speedup_vs_compile',
  'speedup_vs_best',
  'median_ms',
  'eager_ms',
  'compile_ms',
  'speed_of_light_share',
  'own_share',
  'guard_policy',
  'problems',
  'correct_problems',
  ...FAST_P.map((p) => `fast_${p}_vs_eager`),
  ...FAST_P.map((p) => `fast_${p}_vs_best`),
  'geomean_vs_eager',
  'geomean_vs_compile',
  'geomean_vs_best',
  'candidates',
  'evaluated',
  'correct',
  ...VERDICTS.map((verdict) => `n_${verdict}`),
  'input_tokens',
  'output_tokens',
  'cost_usd',
  'gpu_seconds',
] as const;

type Row = Partial<Record<(typeof COLUMNS)[number], string | number | null>>;

function problemRow(runId: string, problem: ReportProblem): Row {
  return {
    run_id: runId,
    scope: 'problem',
    level: problem.level,
    problem: problem.name,
    problem_hash: problem.hash,
    verdict: problem.verdict,
    candidate_id: problem.candidateId,
    chosen_by: problem.chosenBy,
    speedup_vs_eager: problem.speedupVsEager,
    speedup_vs_compile: problem.speedupVsCompile,
    speedup_vs_best: problem.speedupVsBest,
    median_ms: problem.medianMs,
    eager_ms: problem.eagerMs,
    compile_ms: problem.compileMs,
    speed_of_light_share: problem.speedOfLightShare,
    own_share: problem.ownShare ?? null,
    candidates: problem.candidates,
    evaluated: problem.evaluated,
    correct: problem.correct,
    ...Object.fromEntries(VERDICTS.map((verdict) => [`n_${verdict}`, problem.verdictCounts[verdict]])),
    input_tokens: problem.inputTokens,
    output_tokens: problem.outputTokens,
    cost_usd: problem.costUsd,
    gpu_seconds: problem.gpuSeconds,
  };
}

function groupRow(runId: string, group: ReportGroup): Row {
  const fast = (p: string) => group.fastP.find((row) => String(row.p) === p);
  return {
    run_id: runId,
    scope: group.level === 'all' ? 'total' : 'level',
    level: group.level,
    speed_of_light_share: group.meanSpeedOfLightShare,
    problems: group.problems,
    correct_problems: group.correctProblems,
    ...Object.fromEntries(FAST_P.map((p) => [`fast_${p}_vs_eager`, fast(p)?.vsEager ?? null])),
    ...Object.fromEntries(FAST_P.map((p) => [`fast_${p}_vs_best`, fast(p)?.vsBest ?? null])),
    geomean_vs_eager: group.geomeanSpeedupVsEager,
    geomean_vs_compile: group.geomeanSpeedupVsCompile,
    geomean_vs_best: group.geomeanSpeedupVsBest,
    candidates: group.candidates,
    ...Object.fromEntries(VERDICTS.map((verdict) => [`n_${verdict}`, group.verdictCounts[verdict]])),
    input_tokens: group.inputTokens,
    output_tokens: group.outputTokens,
    cost_usd: group.costUsd,
    gpu_seconds: group.gpuSeconds,
  };
}

/**
 * The report as CSV: one row per problem (`scope` = `problem`), then one per level and one for
 * the whole run (`total`). Numbers are written in full; empty cells mean "not measured".
 */
export function renderCsvReport(report: RunReportData): string {
  const rows = [
    ...report.problems.map((problem) => problemRow(report.run.id, problem)),
    ...report.levels.map((group) => groupRow(report.run.id, group)),
    groupRow(report.run.id, report.total),
  ].map((row): Row => ({ ...row, guard_policy: report.run.guardPolicy ?? null }));
  return `${[COLUMNS.join(','), ...rows.map((row) => COLUMNS.map((column) => field(row[column] ?? null)).join(','))].join('\r\n')}\r\n`;
}
