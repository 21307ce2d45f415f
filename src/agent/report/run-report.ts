import path from 'node:path';
import { REFERENCE_FILE } from '../../eval/problem/problem-folder.js';
import type { EvaluationResult, TimingSummary, Verdict } from '../../core/verdict.js';
import type { Attempt, EvaluatedAttempt } from '../search/state/attempt.js';
import type { BudgetUsage } from '../search/state/budget.js';
import { computeSuiteMetrics, type ProblemOutcome, type SuiteMetrics } from './metrics.js';
import type { ProblemEndReason } from '../search/state/search-events.js';

/** A problem's best candidate as reported. */
export interface BestKernel {
  candidateId: number;
  verdict: Verdict;
  result: EvaluationResult;
  /** The written kernel (in the output folder). */
  kernelPath: string;
  verdictPath: string;
}

/** What one problem's search reached. */
export interface ProblemReport {
  name: string;
  /** The problem file as run. */
  path: string;
  hash: string;
  /** Candidates stored (replies with code). */
  candidateCount: number;
  evaluatedCount: number;
  correctCount: number;
  best: BestKernel | null;
  usage: BudgetUsage;
  /** Why the search of this problem ended; null when it did not run to an end (stopped). */
  endReason: ProblemEndReason | null;
}

export type RunOutcomeStatus = 'finished' | 'stopped' | 'paused' | 'failed';

/** What a run reached: per problem, the suite metrics and the totals. */
export interface RunReport {
  runId: string;
  status: RunOutcomeStatus;
  problems: ProblemReport[];
  metrics: SuiteMetrics;
  /** The same metrics per folder of problems (a KernelBench level), when the run spans several folders. */
  levels: Array<{ level: string; metrics: SuiteMetrics }>;
  totals: { candidates: number; tokens: number; costUsd: number; deviceMs: number };
}

/** Candidate counts of a history. */
export function countCandidates(history: readonly Attempt[], pending: number): Pick<ProblemReport, 'candidateCount' | 'evaluatedCount' | 'correctCount'> {
  const evaluated = history.filter((attempt): attempt is EvaluatedAttempt => attempt.kind === 'evaluated');
  return {
    candidateCount: evaluated.length + pending,
    evaluatedCount: evaluated.length,
    correctCount: evaluated.filter((attempt) => attempt.result.verdict === 'correct').length,
  };
}

function outcomeOf(problem: ProblemReport): ProblemOutcome {
  const timing = problem.best?.verdict === 'correct' ? problem.best.result.timing : undefined;
  return {
    verdict: problem.best?.verdict ?? null,
    speedupVsEager: timing?.speedup_vs_eager ?? null,
    speedupVsCompile: timing?.speedup_vs_compile ?? null,
    speedupVsBest: timing?.speedup_vs_best ?? null,
  };
}

/**
 * The folder a problem's metrics are grouped by: its file's folder (`level1`), or for a problem
 * folder's reference.py the folder above it (`problems` of KernelBench-Hard's `problems/01_fp8_gemm/`).
 */
function levelOf(problemPath: string): string {
  const folder = path.dirname(problemPath);
  return path.basename(path.basename(problemPath) === REFERENCE_FILE ? path.dirname(folder) : folder);
}

/** The report of a run from its problems' reports. */
export function buildRunReport(runId: string, status: RunOutcomeStatus, problems: ProblemReport[]): RunReport {
  const sum = (pick: (problem: ProblemReport) => number): number => problems.reduce((total, problem) => total + pick(problem), 0);
  const folders = [...new Set(problems.map((problem) => levelOf(problem.path)))];
  const levels =
    folders.length > 1
      ? folders.map((level) => ({
          level,
          metrics: computeSuiteMetrics(problems.filter((problem) => levelOf(problem.path) === level).map(outcomeOf)),
        }))
      : [];
  return {
    runId,
    status,
    problems,
    metrics: computeSuiteMetrics(problems.map(outcomeOf)),
    levels,
    totals: {
      candidates: sum((problem) => problem.candidateCount),
      tokens: sum((problem) => problem.usage.tokens),
      costUsd: sum((problem) => problem.usage.costUsd),
      deviceMs: sum((problem) => problem.usage.deviceMs),
    },
  };
}

/** The object `kforge optimize --json` prints. */
export interface OptimizeJsonOutput {
  run_id: string;
  problems: Array<{
    problem: string;
    candidate_count: number;
    best: { verdict: Verdict; path: string; timing: TimingSummary | null } | null;
  }>;
}

/** `--json` output: `run_id`, and per problem its path, candidate count and best kernel. */
export function toJsonOutput(report: RunReport): OptimizeJsonOutput {
  return {
    run_id: report.runId,
    problems: report.problems.map((problem) => ({
      problem: problem.path,
      candidate_count: problem.candidateCount,
      best: problem.best ? { verdict: problem.best.verdict, path: problem.best.kernelPath, timing: problem.best.result.timing ?? null } : null,
    })),
  };
}
