import { DEFAULT_REWARD_SHAPING, type RewardShaping } from '../../core/reward-shaping-schema.js';
import type { CandidateWithEvaluation, Idea, JsonObject, ModelCall, ProblemRecord, RunEvent, RunStore } from '../../store/run-store.js';
import type { ExportedTurn } from './exported-turn.js';
import { turnReward } from './turn-reward.js';

/** Which turns an export keeps: all, or only those whose candidate is correct. */
export const EXPORT_FILTERS = ['all', 'correct'] as const;
export type ExportFilter = (typeof EXPORT_FILTERS)[number];

export interface ExportRunTurnsOptions {
  /** Default `all`. */
  only?: ExportFilter;
  /** The reward API's shaping the rewards are computed with (docs/reward.md). Default `log-speedup`. */
  shaping?: RewardShaping;
}

/** What the store says about a turn that left no candidate, from the run's events. */
interface TurnEventFacts {
  reason: string | null;
  round: number | null;
  parentCandidateId: number | null;
  ideaId: number | null;
  /** The model had no reply left to give (a replay ran out): no model was asked, so it is no turn. */
  exhausted: boolean;
}

const TURN_EVENT_TYPES = ['reply-without-code', 'model-call-failed'];

/** A reply that the search did not ask a kernel of (the `ideas` strategy's idea prompts). */
const NOT_A_KERNEL_TURN = 'the turn did not ask for a kernel (an ideas prompt): no candidate was taken from it';

const integerOrNull = (value: unknown): number | null => (typeof value === 'number' && Number.isInteger(value) ? value : null);

function eventFacts(events: readonly RunEvent[]): Map<number, TurnEventFacts> {
  const facts = new Map<number, TurnEventFacts>();
  for (const event of events) {
    const payload: JsonObject = event.payload;
    const callId = integerOrNull(payload.modelCallId);
    if (callId === null) continue;
    const text = event.type === 'reply-without-code' ? payload.reason : payload.message;
    facts.set(callId, {
      reason: typeof text === 'string' ? text : null,
      round: integerOrNull(payload.round),
      parentCandidateId: integerOrNull(payload.parentCandidateId),
      ideaId: integerOrNull(payload.ideaId),
      exhausted: payload.exhausted === true,
    });
  }
  return facts;
}

function noCandidateReason(call: ModelCall, facts: TurnEventFacts | undefined): string {
  if (call.error !== null) return `the model call failed: ${call.error}`;
  return facts?.reason ?? NOT_A_KERNEL_TURN;
}

interface TurnContext {
  runId: string;
  problems: Map<string, ProblemRecord>;
  candidates: Map<number, CandidateWithEvaluation>;
  ideas: Map<number, Idea>;
  facts: Map<number, TurnEventFacts>;
  shaping: RewardShaping;
}

function exportedTurn(call: ModelCall, context: TurnContext): ExportedTurn {
  const candidate = context.candidates.get(call.id);
  const facts = context.facts.get(call.id);
  const problem = call.problemHash ? context.problems.get(call.problemHash) : undefined;
  const evaluation = candidate?.evaluation;
  const ideaId = candidate ? candidate.ideaId : (facts?.ideaId ?? null);
  const ideaLabel = candidate?.ideaLabel ?? (ideaId === null ? null : (context.ideas.get(ideaId)?.label ?? null));
  const speedup = {
    vs_eager: evaluation?.speedupVsEager ?? null,
    vs_compile: evaluation?.speedupVsCompile ?? null,
    vs_best: evaluation?.speedupVsBest ?? null,
  };
  const replied = call.error === null && call.replyText !== null;
  const scored = turnReward({ replied, hasCandidate: candidate !== undefined, result: evaluation?.result ?? null }, context.shaping);
  return {
    run_id: context.runId,
    model_call_id: call.id,
    problem: call.problemHash ? { name: problem?.name ?? call.problemHash.slice(0, 8), hash: call.problemHash } : null,
    round: candidate?.round ?? facts?.round ?? call.round,
    parent_candidate_id: candidate ? candidate.parentId : (facts?.parentCandidateId ?? null),
    idea: ideaId === null && ideaLabel === null ? null : { id: ideaId, label: ideaLabel },
    messages: call.messages,
    reply: replied ? { text: call.replyText!, reasoning: call.reasoningText } : null,
    error: call.error,
    model: call.model,
    tokens: { input: call.inputTokens, output: call.outputTokens },
    candidate: candidate ? { id: candidate.id, source: candidate.source } : null,
    no_candidate_reason: candidate ? null : noCandidateReason(call, facts),
    verdict: evaluation?.verdict ?? null,
    speedup,
    reward: scored?.reward ?? null,
    reward_explanation: scored?.explanation ?? null,
  };
}

/**
 * Every model turn of a run, in model-call id order, each with its prompt, reply, the candidate
 * taken from it (with its verdict and speedups) and a reward. A candidate is matched to its turn by
 * `modelCallId` (candidates a person added have none and are not turns). Lineage of a turn without
 * a candidate comes from its `reply-without-code` or `model-call-failed` event. A call the model
 * could not answer because it had nothing left (a replay that ran out: `exhausted` on its event) is
 * no turn: no model was asked, and it would only add a line without a reply or a reward.
 *
 * @returns Undefined when the store has no such run.
 */
export async function exportRunTurns(store: RunStore, runId: string, options: ExportRunTurnsOptions = {}): Promise<ExportedTurn[] | undefined> {
  const run = await store.getRun(runId);
  if (!run) return undefined;
  const [problems, calls, candidates, ideas, events] = await Promise.all([
    store.listRunProblems(runId),
    store.listModelCalls(runId),
    store.listCandidates(runId),
    store.listIdeas(runId),
    store.listEvents(runId, { types: TURN_EVENT_TYPES }),
  ]);
  const context: TurnContext = {
    runId,
    problems: new Map(problems.map((problem) => [problem.hash, problem])),
    candidates: new Map(candidates.flatMap((candidate) => (candidate.modelCallId === null ? [] : [[candidate.modelCallId, candidate] as const]))),
    ideas: new Map(ideas.map((idea) => [idea.id, idea])),
    facts: eventFacts(events),
    shaping: options.shaping ?? DEFAULT_REWARD_SHAPING,
  };
  const turns = [...calls]
    .filter((call) => context.facts.get(call.id)?.exhausted !== true)
    .sort((a, b) => a.id - b.id)
    .map((call) => exportedTurn(call, context));
  return options.only === 'correct' ? turns.filter((turn) => turn.verdict === 'correct') : turns;
}
