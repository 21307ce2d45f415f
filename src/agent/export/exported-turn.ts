import type { Verdict } from '../../core/verdict.js';
import type { ChatMessage } from '../../store/run-store.js';

/**
 * One model turn of a run as `kforge export --format jsonl` writes it (one JSON line each), for
 * training and analysis. Keys are snake_case like the rest of kforge's JSON output. Speedups are
 * ratios (baseline median ms / candidate median ms); tokens are as the provider counted them.
 */
export interface ExportedTurn {
  run_id: string;
  /** The store's id of the model call; lines are in this order. */
  model_call_id: number;
  /** Null for a call made outside any problem. */
  problem: { name: string; hash: string } | null;
  /** Search round, 0 for the first; null when the call recorded none. */
  round: number | null;
  /** The candidate this turn refined; null for a root (or when unknown). */
  parent_candidate_id: number | null;
  /** The idea the turn implemented (`ideas` strategy); null otherwise. */
  idea: { id: number | null; label: string | null } | null;
  /** The prompt exactly as sent (system and user messages, earlier turns where there were any). */
  messages: ChatMessage[];
  /** The model's reply; null when the call failed. */
  reply: { text: string; reasoning: string | null } | null;
  /** Why the call failed; null when it replied. */
  error: string | null;
  /** The model as recorded (`vllm:Qwen/Qwen3-32B`). */
  model: string;
  tokens: { input: number | null; output: number | null };
  /** The candidate taken from the reply; null for a reply without code (see `no_candidate_reason`). */
  candidate: { id: number; source: string } | null;
  /** Why there is no candidate (no code in the reply, a failed call, a turn that asked for ideas); null with a candidate. */
  no_candidate_reason: string | null;
  /** The candidate's verdict; null without a candidate or before it is evaluated. */
  verdict: Verdict | null;
  speedup: { vs_eager: number | null; vs_compile: number | null; vs_best: number | null };
  /**
   * The turn's reward under the reward API's shaping (`log-speedup` unless asked otherwise, docs/reward.md);
   * a reply without code takes the `invalid_input` penalty; null when there is nothing to score
   * (a failed call, a candidate not yet evaluated).
   */
  reward: number | null;
  /** How the reward was reached, one sentence; null with a null reward. */
  reward_explanation: string | null;
}
