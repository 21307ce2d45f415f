import { fastP, FAST_P_THRESHOLDS, geometricMean, type ProblemOutcome } from '../../agent/report/metrics.js';
import type { RunTotals } from '../../store/run-store.js';
import type { ReportGroup, ReportProblem } from '../api-schemas/report-schemas.js';
import { compareLevels } from '../views/problem-level.js';
import { emptyVerdictCounts } from './verdict-counts.js';

const outcomeOf = (problem: ReportProblem): ProblemOutcome => ({
  verdict: problem.verdict,
  speedupVsEager: problem.speedupVsEager,
  speedupVsCompile: problem.speedupVsCompile,
  speedupVsBest: problem.speedupVsBest,
});

const addCost = (total: number | null, cost: number | null): number | null => (total === null ? cost : cost === null ? total : total + cost);

/** The metrics of a group of problems (one level, or all of them). */
export function summarizeGroup(level: string, problems: readonly ReportProblem[]): ReportGroup {
  const outcomes = problems.map(outcomeOf);
  const correct = problems.filter((problem) => problem.verdict === 'correct');
  const geomean = (pick: (problem: ReportProblem) => number | null): number | null => geometricMean(correct.flatMap((problem) => pick(problem) ?? []));
  const shares = correct.flatMap((problem) => problem.speedOfLightShare ?? []);
  const verdictCounts = emptyVerdictCounts();
  for (const problem of problems) for (const [verdict, n] of Object.entries(problem.verdictCounts)) verdictCounts[verdict as keyof typeof verdictCounts] += n;
  return {
    level,
    problems: problems.length,
    correctProblems: correct.length,
    fastP: FAST_P_THRESHOLDS.map((p) => ({ p, vsEager: fastP(outcomes, p, 'eager'), vsBest: fastP(outcomes, p, 'best') })),
    geomeanSpeedupVsEager: geomean((problem) => problem.speedupVsEager),
    geomeanSpeedupVsCompile: geomean((problem) => problem.speedupVsCompile),
    geomeanSpeedupVsBest: geomean((problem) => problem.speedupVsBest),
    meanSpeedOfLightShare: shares.length === 0 ? null : shares.reduce((sum, share) => sum + share, 0) / shares.length,
    candidates: problems.reduce((sum, problem) => sum + problem.candidates, 0),
    verdictCounts,
    inputTokens: problems.reduce((sum, problem) => sum + problem.inputTokens, 0),
    outputTokens: problems.reduce((sum, problem) => sum + problem.outputTokens, 0),
    costUsd: problems.reduce<number | null>((sum, problem) => addCost(sum, problem.costUsd), null),
    gpuSeconds: problems.reduce((sum, problem) => sum + problem.gpuSeconds, 0),
  };
}

/**
 * One group per level, in level order, and the group of all problems. The total's tokens and cost
 * are the run's (they include model calls not tied to one problem).
 */
export function summarizeGroups(problems: readonly ReportProblem[], totals: RunTotals): { levels: ReportGroup[]; total: ReportGroup } {
  const levels = [...new Set(problems.map((problem) => problem.level))].sort(compareLevels);
  const total = summarizeGroup('all', problems);
  return {
    levels: levels.map((level) =>
      summarizeGroup(
        level,
        problems.filter((problem) => problem.level === level),
      ),
    ),
    total: { ...total, inputTokens: totals.inputTokens, outputTokens: totals.outputTokens, costUsd: totals.costUsd, gpuSeconds: totals.gpuSeconds },
  };
}
