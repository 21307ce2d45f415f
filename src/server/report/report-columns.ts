import type { ReportGroup, ReportProblem } from '../api-schemas/report-schemas.js';
import { deviceTimeLabel } from './device-time-label.js';
import { formatCost, formatCount, formatMs, formatSeconds, formatShare, formatSpeedup } from './report-numbers.js';

/** A column of a report's table: its heading and the text of its cell in one row (figures only: nothing to escape). */
export interface ReportColumn<Row> {
  heading: string;
  cell: (row: Row) => string;
}

/** What a problem's row and a level's row both carry: tokens, cost and device time. */
interface Spending {
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  gpuSeconds: number;
}

const tokensInOut = <Row extends Spending>(): ReportColumn<Row> => ({
  heading: 'tokens in / out',
  cell: (row) => `${formatCount(row.inputTokens)} / ${formatCount(row.outputTokens)}`,
});
const cost = <Row extends Spending>(): ReportColumn<Row> => ({ heading: 'cost', cell: (row) => formatCost(row.costUsd) });

/** The device time a row held, headed `CPU time` or `GPU time` by the run's backend. */
export function deviceTimeColumn<Row extends Spending>(backend: string | null | undefined): ReportColumn<Row> {
  return { heading: deviceTimeLabel(backend), cell: (row) => formatSeconds(row.gpuSeconds) };
}

/** The figures of a problem's row, by name; each report picks those it shows, in its order. */
export const PROBLEM_FIGURES = {
  vsEager: { heading: 'vs eager', cell: (problem) => formatSpeedup(problem.speedupVsEager) },
  vsCompile: { heading: 'vs compile', cell: (problem) => formatSpeedup(problem.speedupVsCompile) },
  vsBest: { heading: 'vs best', cell: (problem) => formatSpeedup(problem.speedupVsBest) },
  median: { heading: 'median', cell: (problem) => formatMs(problem.medianMs) },
  eager: { heading: 'eager', cell: (problem) => formatMs(problem.eagerMs) },
  compile: { heading: 'compile', cell: (problem) => formatMs(problem.compileMs) },
  speedOfLight: { heading: 'speed of light', cell: (problem) => formatShare(problem.speedOfLightShare) },
  ownShare: { heading: 'own share', cell: (problem) => formatShare(problem.ownShare ?? null) },
  correctOfEvaluated: { heading: 'correct / evaluated', cell: (problem) => `${problem.correct} / ${problem.evaluated}` },
  tokens: { heading: 'tokens', cell: (problem) => formatCount(problem.inputTokens + problem.outputTokens) },
  tokensInOut: tokensInOut<ReportProblem>(),
  cost: cost<ReportProblem>(),
} satisfies Record<string, ReportColumn<ReportProblem>>;

/** The figures of a level's (or the run's) row in the metrics table, after its `fast_p` cells. */
export function groupFigures(backend: string | null | undefined): ReportColumn<ReportGroup>[] {
  return [
    { heading: 'geomean vs eager', cell: (group) => formatSpeedup(group.geomeanSpeedupVsEager) },
    { heading: 'vs compile', cell: (group) => formatSpeedup(group.geomeanSpeedupVsCompile) },
    { heading: 'vs best', cell: (group) => formatSpeedup(group.geomeanSpeedupVsBest) },
    { heading: 'speed of light', cell: (group) => formatShare(group.meanSpeedOfLightShare) },
    tokensInOut<ReportGroup>(),
    cost<ReportGroup>(),
    deviceTimeColumn<ReportGroup>(backend),
  ];
}
