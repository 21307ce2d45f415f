import type { CandidateWithEvaluation } from '../../store/run-store.js';
import type { CandidateNode } from '../api-schemas/problem-schemas.js';

/** What the server knows about evaluations it runs itself (edits), beyond what the store holds. */
export interface EvaluationTracker {
  /** The candidate is being evaluated by this server right now. */
  isEvaluating(candidateId: number): boolean;
  /** Why this server's evaluation of the candidate failed (the evaluator's own fault), else null. */
  errorOf(candidateId: number): string | null;
}

/** A tracker that knows of no evaluations. */
export const NO_EVALUATIONS: EvaluationTracker = { isEvaluating: () => false, errorOf: () => null };

/** A stored candidate as a tree node: lineage, verdict, speedups, no source. */
export function toCandidateNode(candidate: CandidateWithEvaluation, context: { acceptedId: number | null; tracker: EvaluationTracker }): CandidateNode {
  const evaluation = candidate.evaluation;
  return {
    id: candidate.id,
    parentId: candidate.parentId,
    round: candidate.round,
    ideaId: candidate.ideaId,
    ideaLabel: candidate.ideaLabel,
    origin: candidate.origin,
    createdAt: candidate.createdAt,
    verdict: evaluation?.verdict ?? null,
    firstReason: evaluation?.result.reasons[0]?.message ?? null,
    speedupVsEager: evaluation?.speedupVsEager ?? null,
    speedupVsCompile: evaluation?.speedupVsCompile ?? null,
    speedupVsBest: evaluation?.speedupVsBest ?? null,
    medianMs: evaluation?.candidateMedianMs ?? null,
    ownShare: evaluation?.result.attribution?.own_share ?? null,
    evaluatedAt: evaluation?.createdAt ?? null,
    evaluating: evaluation === undefined && context.tracker.isEvaluating(candidate.id),
    accepted: context.acceptedId === candidate.id,
  };
}
