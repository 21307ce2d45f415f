import type { RunStore } from '../../store/run-store.js';
import type { CandidateDetail } from '../api-schemas/candidate-schemas.js';
import { acceptedCandidates } from './accepted-candidates.js';
import { buildDetails } from './build-details.js';
import { toCandidateNode, type EvaluationTracker } from './candidate-node.js';
import { guardDetails } from './guard-details.js';
import { speedOfLight } from './speed-of-light.js';

/**
 * Everything the candidate panel shows: source, the parent's source for the diff, lineage, the
 * evaluation with its reasons and timings, the model call that produced it, build figures.
 */
export async function loadCandidateDetail(store: RunStore, candidateId: number, tracker: EvaluationTracker): Promise<CandidateDetail | undefined> {
  const candidate = await store.getCandidate(candidateId);
  if (!candidate) return undefined;
  const [problem, lineage, siblings, actions] = await Promise.all([
    store.getProblem(candidate.problemHash),
    store.candidateLineage(candidateId),
    store.listCandidates(candidate.runId, { problemHash: candidate.problemHash }),
    store.listActions(candidate.runId, { problemHash: candidate.problemHash, types: ['accept'] }),
  ]);
  const acceptance = acceptedCandidates(actions).get(candidate.problemHash);
  const acceptedId = acceptance?.candidateId ?? null;
  const parent = candidate.parentId === null ? undefined : siblings.find((sibling) => sibling.id === candidate.parentId);
  const call = candidate.modelCallId === null ? undefined : await store.getModelCall(candidate.modelCallId);
  const evaluation = candidate.evaluation;
  return {
    candidate: {
      ...toCandidateNode(candidate, { acceptedId, tracker }),
      runId: candidate.runId,
      problemHash: candidate.problemHash,
      problemName: problem?.name ?? candidate.problemHash.slice(0, 12),
      source: candidate.source,
      sourceHash: candidate.sourceHash,
      modelCallId: candidate.modelCallId,
    },
    evaluation: evaluation
      ? {
          id: evaluation.id,
          result: evaluation.result,
          gpuSeconds: evaluation.gpuSeconds,
          reusedFromEvaluationId: evaluation.reusedFromEvaluationId,
          createdAt: evaluation.createdAt,
        }
      : null,
    parent: parent ? { id: parent.id, source: parent.source } : null,
    lineage: lineage.map((step) => ({ id: step.id, round: step.round, ideaLabel: step.ideaLabel, origin: step.origin })),
    children: siblings.filter((sibling) => sibling.parentId === candidateId).map((child) => child.id),
    modelCall: call
      ? {
          id: call.id,
          model: call.model,
          round: call.round,
          messages: call.messages,
          replyText: call.replyText,
          reasoningText: call.reasoningText,
          inputTokens: call.inputTokens,
          outputTokens: call.outputTokens,
          latencyMs: call.latencyMs,
          costUsd: call.costUsd,
          error: call.error,
          createdAt: call.createdAt,
        }
      : null,
    speedOfLight: evaluation ? speedOfLight(evaluation.result) : null,
    guard: evaluation ? guardDetails(evaluation.result) : null,
    build: evaluation ? buildDetails(evaluation.result) : null,
    acceptance: acceptance && acceptedId === candidateId ? { note: acceptance.note, createdAt: acceptance.createdAt } : null,
    evaluationError: evaluation ? null : tracker.errorOf(candidateId),
  };
}
