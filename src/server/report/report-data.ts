import type { CandidateWithEvaluation, ProblemSummary, RunStore, RunSummary } from '../../store/run-store.js';
import type { ReportProblem, RunReportData } from '../api-schemas/report-schemas.js';
import { acceptedCandidates, type Acceptance } from '../views/accepted-candidates.js';
import { problemLevel } from '../views/problem-level.js';
import { readRunPlan } from '../views/run-plan.js';
import { speedOfLight } from '../views/speed-of-light.js';
import { resolveGuardPolicy } from '../../core/guard-policy.js';
import { summarizeGroups } from './report-groups.js';
import { emptyVerdictCounts } from './verdict-counts.js';

/**
 * The policy the run's verdicts were judged under: the plan's (an alias resolved), else what its
 * evaluations name (runs created before the plan recorded it), else null.
 */
function runGuardPolicy(planned: string | undefined, candidates: readonly CandidateWithEvaluation[]): string | null {
  if (planned !== undefined) return resolveGuardPolicy(planned) ?? planned;
  for (const candidate of candidates) {
    const policy = candidate.evaluation?.result.guard?.policy;
    if (typeof policy === 'string') return resolveGuardPolicy(policy) ?? policy;
  }
  return null;
}

export interface BuildReportOptions {
  /** Clock for `generatedAt`. Default `() => new Date()`. */
  now?: () => Date;
}

/** Best speedup (vs the best baseline) after each evaluation, in evaluation order; minutes from the run's start. */
function bestSoFar(candidates: readonly CandidateWithEvaluation[], startedAtMs: number): ReportProblem['bestSoFar'] {
  const evaluated = candidates.flatMap((candidate) => (candidate.evaluation ? [candidate.evaluation] : []));
  evaluated.sort((a, b) => a.id - b.id);
  let best: number | null = null;
  return evaluated.map((evaluation, index) => {
    const speedup = evaluation.verdict === 'correct' ? (evaluation.speedupVsBest ?? evaluation.speedupVsEager) : null;
    if (speedup !== null && (best === null || speedup > best)) best = speedup;
    return { evaluated: index + 1, minutes: Math.max(0, (Date.parse(evaluation.createdAt) - startedAtMs) / 60_000), speedup: best };
  });
}

function problemRow(
  summary: ProblemSummary,
  context: { path: string | null; candidates: CandidateWithEvaluation[]; acceptance: Acceptance | undefined; startedAtMs: number },
): ReportProblem {
  const verdictCounts = emptyVerdictCounts();
  for (const candidate of context.candidates) if (candidate.evaluation) verdictCounts[candidate.evaluation.verdict] += 1;
  const accepted = context.acceptance ? context.candidates.find((candidate) => candidate.id === context.acceptance?.candidateId) : undefined;
  const fastest = context.candidates.find((candidate) => candidate.id === summary.bestCandidateId);
  const chosen = accepted?.evaluation ? accepted : fastest;
  const result = chosen?.evaluation?.result;
  const timing = result?.verdict === 'correct' ? result.timing : undefined;
  return {
    name: summary.name,
    hash: summary.problemHash,
    level: problemLevel({ path: context.path, name: summary.name }),
    path: context.path,
    candidates: summary.candidates,
    evaluated: summary.evaluated,
    correct: summary.correct,
    verdictCounts,
    verdict: result?.verdict ?? summary.bestVerdict,
    candidateId: chosen?.id ?? null,
    chosenBy: chosen === undefined ? 'none' : chosen === accepted ? 'accepted' : 'fastest',
    speedupVsEager: timing?.speedup_vs_eager ?? null,
    speedupVsCompile: timing?.speedup_vs_compile ?? null,
    speedupVsBest: timing ? (timing.speedup_vs_best ?? timing.speedup_vs_eager) : null,
    medianMs: timing?.candidate_ms.median ?? null,
    eagerMs: timing?.eager_ms?.median ?? null,
    compileMs: timing?.compile_ms?.median ?? null,
    speedOfLightShare: result ? (speedOfLight(result)?.share ?? null) : null,
    ownShare: result?.attribution?.own_share ?? null,
    inputTokens: summary.inputTokens,
    outputTokens: summary.outputTokens,
    costUsd: summary.costUsd,
    gpuSeconds: summary.gpuSeconds,
    bestSoFar: bestSoFar(context.candidates, context.startedAtMs),
  };
}

/** The report of a run from a summary already read (see {@link buildRunReport}). */
export async function buildReportFromSummary(store: RunStore, summary: RunSummary, options: BuildReportOptions = {}): Promise<RunReportData> {
  const [records, candidates, actions] = await Promise.all([
    store.listRunProblems(summary.id),
    store.listCandidates(summary.id),
    store.listActions(summary.id, { types: ['accept'] }),
  ]);
  const paths = new Map(records.map((record) => [record.hash, record.path]));
  const accepted = acceptedCandidates(actions);
  const startedAtMs = Date.parse(summary.startedAt);
  const problems = summary.problems.map((problem) =>
    problemRow(problem, {
      path: paths.get(problem.problemHash) ?? null,
      candidates: candidates.filter((candidate) => candidate.problemHash === problem.problemHash),
      acceptance: accepted.get(problem.problemHash),
      startedAtMs,
    }),
  );
  const plan = readRunPlan(summary);
  const { levels, total } = summarizeGroups(problems, summary.totals);
  return {
    generatedAt: (options.now ?? (() => new Date()))().toISOString(),
    store: store.location,
    run: {
      id: summary.id,
      status: summary.status,
      strategy: summary.strategy,
      model: summary.model,
      backend: plan?.evaluation.backend ?? null,
      precision: plan?.evaluation.precision ?? null,
      guardPolicy: runGuardPolicy(plan?.evaluation.guardPolicy, candidates),
      startedAt: summary.startedAt,
      finishedAt: summary.finishedAt,
      modelCalls: summary.totals.modelCalls,
    },
    problems,
    levels,
    total,
  };
}

/**
 * Everything `kforge report` prints about a run: per problem the reported candidate (the accepted
 * one, else the fastest correct one), per level and overall the docs/spec.md section 7 metrics.
 * Undefined when the store has no such run.
 */
export async function buildRunReport(store: RunStore, runId: string, options: BuildReportOptions = {}): Promise<RunReportData | undefined> {
  const summary = await store.getRunSummary(runId);
  return summary ? buildReportFromSummary(store, summary, options) : undefined;
}
