import type { EvaluationResult } from '../../core/verdict.js';
import type { CandidateWithEvaluation, Idea, RunEvent, RunStore } from '../../store/run-store.js';
import {
  strategyNameSchema,
  type Attempt,
  type CandidateRecord,
  type EvaluatedAttempt,
  type IdeaRef,
  type Lineage,
  type StrategyName,
} from '../search/state/attempt.js';
import type { BudgetUsage } from '../search/state/budget.js';
import type { ProblemEndReason } from '../search/state/search-events.js';
import { isImprovement, speedupOf, type SpeedupBaseline } from '../search/selection/candidate-ranking.js';

/** What the store says about one problem of a run: enough to continue its search. */
export interface ProblemState {
  /** Attempts in the order they were made (evaluated candidates, replies without code, failed calls). */
  attempts: Attempt[];
  /** Candidates stored but never evaluated (the run was killed during their evaluation). */
  pending: CandidateRecord[];
  /** What the problem had used, for its budget. */
  spent: BudgetUsage;
  /** Candidates since the last improvement or reported stall, for the stall detector. */
  sinceImprovement: number;
  /** The strategy the problem was last handed to. */
  strategy: StrategyName;
  /** The problem ended for good (budget, target, strategy done) and is not searched again. */
  finished: boolean;
  /** The problem was paused after a stall. */
  paused: boolean;
  /** Why the problem's search last ended, or null when it never ended (it was stopped or killed). */
  endReason: ProblemEndReason | null;
}

export interface LoadProblemStateOptions {
  runId: string;
  problemHash: string;
  /** The run's first strategy. */
  strategy: StrategyName;
  speedupBaseline: SpeedupBaseline;
  minRelativeGain: number;
  /** Where a candidate's file lies (it is rewritten from the store when missing). */
  candidatePath: (candidateId: number) => string;
}

function numberField(payload: Record<string, unknown>, key: string): number | null {
  const value = payload[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function lineageFrom(round: number, parentCandidateId: number | null, ideaId: number | null, ideas: Map<number, IdeaRef>): Lineage {
  return { round, parentCandidateId, idea: ideaId === null ? null : (ideas.get(ideaId) ?? null) };
}

/**
 * A stored candidate as the search holds it: its record (with the file it is evaluated from) and,
 * once evaluated, its attempt.
 */
export function storedCandidateAttempt(
  stored: CandidateWithEvaluation,
  path: string,
  idea: IdeaRef | null,
): { candidate: CandidateRecord; attempt: EvaluatedAttempt | null } {
  const lineage: Lineage = { round: stored.round, parentCandidateId: stored.parentId, idea };
  const candidate: CandidateRecord = { id: stored.id, source: stored.source, path, lineage, modelCallId: stored.modelCallId };
  const attempt: EvaluatedAttempt | null = stored.evaluation
    ? { kind: 'evaluated', lineage, candidate, result: stored.evaluation.result, deviceMs: stored.evaluation.gpuSeconds * 1000 }
    : null;
  return { candidate, attempt };
}

function ideaMap(ideas: readonly Idea[]): Map<number, IdeaRef> {
  return new Map(ideas.map((idea) => [idea.id, { id: idea.id, label: idea.label, text: idea.text }]));
}

/**
 * Rebuilds a problem's search from the store. Events are in commit order, so the store's own
 * `candidate-added` events, with the search's `reply-without-code` and `model-call-failed`, give
 * the attempts in the order they happened.
 */
export async function loadProblemState(store: RunStore, options: LoadProblemStateOptions): Promise<ProblemState> {
  const { runId, problemHash } = options;
  const [candidates, events, ideas, calls] = await Promise.all([
    store.listCandidates(runId, { problemHash }),
    store.listEvents(runId, { problemHash }),
    store.listIdeas(runId, { problemHash }),
    store.listModelCalls(runId, { problemHash }),
  ]);
  const ideasById = ideaMap(ideas);
  const byId = new Map(candidates.map((candidate) => [candidate.id, candidate]));
  const attempts: Attempt[] = [];
  const pending: CandidateRecord[] = [];
  for (const event of events) {
    const payload = event.payload;
    const round = numberField(payload, 'round') ?? 0;
    if (event.type === 'candidate-added') {
      const stored = byId.get(numberField(payload, 'candidateId') ?? -1);
      if (!stored) continue;
      const idea = stored.ideaId === null ? null : (ideasById.get(stored.ideaId) ?? null);
      const { candidate, attempt } = storedCandidateAttempt(stored, options.candidatePath(stored.id), idea);
      if (attempt) attempts.push(attempt);
      else pending.push(candidate);
    } else if (event.type === 'reply-without-code') {
      const lineage = lineageFrom(round, numberField(payload, 'parentCandidateId'), numberField(payload, 'ideaId'), ideasById);
      attempts.push({ kind: 'no-code', lineage, modelCallId: numberField(payload, 'modelCallId') ?? 0, reason: String(payload.reason ?? '') });
    } else if (event.type === 'model-call-failed' && payload.purpose !== 'ideas') {
      const lineage = lineageFrom(round, numberField(payload, 'parentCandidateId'), numberField(payload, 'ideaId'), ideasById);
      attempts.push({ kind: 'model-failed', lineage, message: String(payload.message ?? '') });
    }
  }
  return {
    attempts,
    pending,
    spent: {
      candidates: attempts.filter((attempt) => attempt.kind !== 'model-failed').length + pending.length,
      tokens: calls.reduce((sum, call) => sum + (call.inputTokens ?? 0) + (call.outputTokens ?? 0), 0),
      costUsd: calls.reduce((sum, call) => sum + (call.costUsd ?? 0), 0),
      deviceMs: candidates.reduce((sum, candidate) => sum + (candidate.evaluation?.gpuSeconds ?? 0) * 1000, 0),
      elapsedMs: events.reduce((latest, event) => Math.max(latest, numberField(event.payload, 'elapsedMs') ?? 0), 0),
      bestSpeedup: bestSpeedup(attempts, options.speedupBaseline),
    },
    sinceImprovement: sinceImprovement(attempts, events, options.minRelativeGain),
    strategy: lastStrategy(events) ?? options.strategy,
    finished: events.some((event) => event.type === 'problem-finished' && event.payload.final === true),
    paused: lastOf(events, ['problem-paused', 'problem-resumed'])?.type === 'problem-paused',
    endReason: endReasonOf(events),
  };
}

function bestSpeedup(attempts: readonly Attempt[], baseline: SpeedupBaseline): number | null {
  let best: number | null = null;
  for (const attempt of attempts) {
    if (attempt.kind !== 'evaluated') continue;
    const speedup = speedupOf(attempt.result, baseline);
    if (speedup !== null && (best === null || speedup > best)) best = speedup;
  }
  return best;
}

function sinceImprovement(attempts: readonly Attempt[], events: readonly RunEvent[], minRelativeGain: number): number {
  const counted = attempts.filter((attempt) => attempt.kind !== 'model-failed');
  let lastImprovement = -1;
  let best: EvaluationResult | null = null;
  counted.forEach((attempt, index) => {
    if (attempt.kind !== 'evaluated' || !isImprovement(attempt.result, best, minRelativeGain)) return;
    best = attempt.result;
    lastImprovement = index;
  });
  const lastStall = lastOf(events, ['problem-stalled']);
  const stalledAt = lastStall ? (numberField(lastStall.payload, 'attemptCount') ?? 0) : 0;
  return counted.length - Math.max(lastImprovement + 1, stalledAt);
}

function endReasonOf(events: readonly RunEvent[]): ProblemEndReason | null {
  const last = lastOf(events, ['problem-finished', 'problem-paused', 'problem-started', 'problem-resumed']);
  if (last?.type === 'problem-paused') return 'paused';
  if (last?.type !== 'problem-finished') return null;
  const reason = last.payload.reason;
  return typeof reason === 'string' ? (reason as ProblemEndReason) : null;
}

function lastStrategy(events: readonly RunEvent[]): StrategyName | null {
  const switched = lastOf(events, ['strategy-switched']);
  const parsed = strategyNameSchema.safeParse(switched?.payload.to);
  return parsed.success ? parsed.data : null;
}

function lastOf(events: readonly RunEvent[], types: readonly string[]): RunEvent | undefined {
  return [...events].reverse().find((event) => types.includes(event.type));
}
