import type { RunStore } from '../../store/run-store.js';
import type { ProblemView } from '../api-schemas/problem-schemas.js';
import { acceptedCandidates } from './accepted-candidates.js';
import { toCandidateNode, type EvaluationTracker } from './candidate-node.js';
import { problemLevel } from './problem-level.js';

/** One problem of a run: its summary, candidate tree, ideas, hints and actions; undefined when unknown. */
export async function loadProblemView(store: RunStore, runId: string, problemHash: string, tracker: EvaluationTracker): Promise<ProblemView | undefined> {
  const summary = await store.getRunSummary(runId);
  const problemSummary = summary?.problems.find((problem) => problem.problemHash === problemHash);
  const record = problemSummary ? await store.getProblem(problemHash) : undefined;
  if (!summary || !problemSummary || !record) return undefined;
  const actions = await store.listActions(runId, { problemHash });
  const acceptedId = acceptedCandidates(actions).get(problemHash)?.candidateId ?? null;
  const candidates = await store.listCandidates(runId, { problemHash });
  return {
    run: { id: summary.id, status: summary.status, strategy: summary.strategy, model: summary.model, startedAt: summary.startedAt },
    problem: {
      ...problemSummary,
      level: problemLevel(record),
      path: record.path,
      acceptedCandidateId: acceptedId,
      source: record.source,
    },
    candidates: candidates.map((candidate) => toCandidateNode(candidate, { acceptedId, tracker })),
    ideas: await store.listIdeas(runId, { problemHash }),
    hints: await store.listHints(runId, problemHash),
    actions,
  };
}
