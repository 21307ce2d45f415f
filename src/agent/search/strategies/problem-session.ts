import type { ChatMessage } from '../../../llm/kernel-model.js';
import type { JsonObject } from '../../../store/run-store.js';
import type { Attempt, EvaluatedAttempt, IdeaRef, Lineage } from '../state/attempt.js';
import type { BudgetStopReason } from '../state/budget.js';
import type { ProposedIdea } from '../prompts/idea-parser.js';
import type { PromptProblem, ShownCandidate } from '../prompts/prompt-builder.js';

/** Why a strategy must stop asking for work on a problem. */
export type SessionStopReason =
  | { kind: 'budget'; limit: BudgetStopReason }
  | { kind: 'stopped' }
  | { kind: 'paused' }
  | { kind: 'switch-strategy' }
  | { kind: 'model-unavailable'; message: string }
  | { kind: 'model-exhausted'; message: string };

/** One request for a kernel: the prompt and where the candidate will sit in the lineage. */
export interface AttemptRequest {
  messages: ChatMessage[];
  lineage: Lineage;
  temperature?: number;
}

/** An idea as the session keeps it, with the round it was proposed in and a person's verdict on it. */
export interface SessionIdea extends IdeaRef {
  round: number;
  status: 'active' | 'pinned' | 'dropped';
}

/**
 * The search of one problem as a strategy sees it. It wraps the model (behind the provider's
 * concurrency limit), the evaluation queue, the budget and the store: every call, candidate,
 * evaluation and event a strategy causes is recorded here, so strategies only decide what to ask.
 */
export interface ProblemSession {
  /** What prompts about this problem carry (the target is refined after the first evaluation). */
  readonly prompt: PromptProblem;
  /** Every attempt so far, oldest first (on resume, reconstructed from the store). */
  readonly history: readonly Attempt[];
  /** The best evaluated attempt so far (correct and fastest, else the one that got furthest). */
  readonly best: EvaluatedAttempt | null;

  /** Null while work may go on; otherwise why the strategy must stop. */
  stopReason(): SessionStopReason | null;
  /**
   * Asks the model for one kernel, records the reply, takes the candidate from it and has it
   * evaluated. Returns the attempt (a reply without code and a failed call are attempts too), or
   * null when the session refused to start (see `stopReason`).
   */
  attempt(request: AttemptRequest): Promise<Attempt | null>;
  /** Asks the model for text that is not a kernel (ideas); recorded, counted, no candidate. */
  ask(messages: ChatMessage[], round: number): Promise<string | null>;
  /** Stores ideas proposed in a round and returns them with their ids. */
  addIdeas(round: number, ideas: readonly ProposedIdea[]): Promise<SessionIdea[]>;
  /** Every idea of this problem, with a person's pin/drop applied. */
  ideas(): Promise<SessionIdea[]>;
  /** A candidate as a prompt shows it: its source and trimmed evaluation. */
  show(attempt: EvaluatedAttempt): ShownCandidate;
  /** Records an event of the strategy's own (`round-started`, `ideas-proposed`). */
  recordEvent(type: string, payload: JsonObject): Promise<void>;
}
