import type { Verdict } from '../core/verdict.js';
import { VERDICT_RANK, type ProblemSummary, type Run, type RunSummary, type RunTotals } from './store-records.js';

/**
 * Aggregates a backend has counted, grouped by (run, problem); `problemHash` null means work of
 * the run as a whole (a model call or event not tied to one problem). `buildRunSummaries` turns
 * them into summaries, so every backend defines "best" and "share" the same way.
 */
export interface SummaryAggregates {
  problemNames: ReadonlyMap<string, string>;
  candidateCounts: ReadonlyArray<{ runId: string; problemHash: string; count: number }>;
  verdictCounts: ReadonlyArray<{ runId: string; problemHash: string; verdict: Verdict; count: number; gpuSeconds: number }>;
  correctEvaluations: ReadonlyArray<{
    runId: string;
    problemHash: string;
    candidateId: number;
    speedupVsEager: number | null;
    speedupVsCompile: number | null;
    speedupVsBest: number | null;
    candidateMedianMs: number | null;
  }>;
  modelCallTotals: ReadonlyArray<{
    runId: string;
    problemHash: string | null;
    count: number;
    inputTokens: number;
    outputTokens: number;
    costUsd: number | null;
  }>;
  eventCounts: ReadonlyArray<{ runId: string; problemHash: string | null; count: number }>;
}

const key = (runId: string, problemHash: string | null): string => `${runId}\u0000${problemHash ?? ''}`;

const addCost = (total: number | null, cost: number | null): number | null => (total === null ? cost : cost === null ? total : total + cost);

function emptyProblem(problemHash: string, name: string): ProblemSummary {
  return {
    problemHash,
    name,
    candidates: 0,
    evaluated: 0,
    correct: 0,
    correctShare: null,
    bestVerdict: null,
    bestCandidateId: null,
    bestSpeedupVsEager: null,
    bestSpeedupVsCompile: null,
    bestSpeedupVsBest: null,
    bestCandidateMedianMs: null,
    modelCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: null,
    gpuSeconds: 0,
    events: 0,
  };
}

/** True when `speedup` beats `current`; a known speedup beats none, ties keep the earlier candidate. */
const beats = (speedup: number | null, current: number | null): boolean => speedup !== null && (current === null || speedup > current);

function fillProblems(problems: Map<string, ProblemSummary>, aggregates: SummaryAggregates): void {
  for (const row of aggregates.candidateCounts) {
    const problem = problems.get(key(row.runId, row.problemHash));
    if (problem) problem.candidates = row.count;
  }
  for (const row of aggregates.verdictCounts) {
    const problem = problems.get(key(row.runId, row.problemHash));
    if (!problem) continue;
    problem.evaluated += row.count;
    problem.gpuSeconds += row.gpuSeconds;
    if (row.verdict === 'correct') problem.correct += row.count;
    const rank = VERDICT_RANK.indexOf(row.verdict);
    if (problem.bestVerdict === null || rank < VERDICT_RANK.indexOf(problem.bestVerdict)) problem.bestVerdict = row.verdict;
  }
  for (const row of aggregates.correctEvaluations) {
    const problem = problems.get(key(row.runId, row.problemHash));
    if (!problem) continue;
    const first = problem.bestCandidateId === null;
    if (!first && !beats(row.speedupVsBest, problem.bestSpeedupVsBest)) continue;
    problem.bestCandidateId = row.candidateId;
    problem.bestSpeedupVsEager = row.speedupVsEager;
    problem.bestSpeedupVsCompile = row.speedupVsCompile;
    problem.bestSpeedupVsBest = row.speedupVsBest;
    problem.bestCandidateMedianMs = row.candidateMedianMs;
  }
  for (const problem of problems.values()) {
    problem.correctShare = problem.evaluated > 0 ? problem.correct / problem.evaluated : null;
  }
}

function totalsOf(run: Run, problems: ProblemSummary[], aggregates: SummaryAggregates): RunTotals {
  const totals: RunTotals = {
    problems: problems.length,
    problemsSolved: problems.filter((problem) => problem.correct > 0).length,
    candidates: 0,
    evaluated: 0,
    correct: 0,
    correctShare: null,
    bestSpeedupVsBest: null,
    modelCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: null,
    gpuSeconds: 0,
    events: 0,
  };
  for (const problem of problems) {
    totals.candidates += problem.candidates;
    totals.evaluated += problem.evaluated;
    totals.correct += problem.correct;
    totals.gpuSeconds += problem.gpuSeconds;
    if (beats(problem.bestSpeedupVsBest, totals.bestSpeedupVsBest)) totals.bestSpeedupVsBest = problem.bestSpeedupVsBest;
  }
  for (const row of aggregates.modelCallTotals) {
    if (row.runId !== run.id) continue;
    totals.modelCalls += row.count;
    totals.inputTokens += row.inputTokens;
    totals.outputTokens += row.outputTokens;
    totals.costUsd = addCost(totals.costUsd, row.costUsd);
  }
  for (const row of aggregates.eventCounts) if (row.runId === run.id) totals.events += row.count;
  totals.correctShare = totals.evaluated > 0 ? totals.correct / totals.evaluated : null;
  return totals;
}

/** Summaries of `runs`, in the order given, from aggregates that cover at least those runs. */
export function buildRunSummaries(runs: readonly Run[], aggregates: SummaryAggregates): RunSummary[] {
  const problems = new Map<string, ProblemSummary>();
  for (const run of runs) {
    for (const hash of run.problemHashes) {
      problems.set(key(run.id, hash), emptyProblem(hash, aggregates.problemNames.get(hash) ?? hash.slice(0, 12)));
    }
  }
  fillProblems(problems, aggregates);
  for (const row of aggregates.modelCallTotals) {
    const problem = row.problemHash === null ? undefined : problems.get(key(row.runId, row.problemHash));
    if (!problem) continue;
    problem.modelCalls += row.count;
    problem.inputTokens += row.inputTokens;
    problem.outputTokens += row.outputTokens;
    problem.costUsd = addCost(problem.costUsd, row.costUsd);
  }
  for (const row of aggregates.eventCounts) {
    const problem = row.problemHash === null ? undefined : problems.get(key(row.runId, row.problemHash));
    if (problem) problem.events += row.count;
  }
  return runs.map((run) => {
    const runProblems = run.problemHashes.map((hash) => problems.get(key(run.id, hash)) as ProblemSummary);
    return { ...run, problems: runProblems, totals: totalsOf(run, runProblems, aggregates) };
  });
}
