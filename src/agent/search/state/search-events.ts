import type { Verdict } from '../../../core/verdict.js';
import type { EvaluationProgress } from '../../../eval/evaluator.js';
import type { StrategyName } from './attempt.js';
import type { BudgetUsage } from './budget.js';
import type { StallPolicy } from './stall-detector.js';

/** Why a problem's search ended. */
export type ProblemEndReason =
  | 'candidates'
  | 'wall-clock'
  | 'tokens'
  | 'cost'
  | 'device-seconds'
  | 'target-speedup'
  | 'strategy-finished'
  | 'paused'
  | 'stopped'
  | 'model-unavailable'
  | 'model-exhausted';

/**
 * Fields every problem event carries, for progress views.
 *
 * A candidate is named twice in events: `candidateId`, the store's id (unique in the store, as
 * `kforge runs show`, the dashboard and the candidate files name it), and `candidateNumber`, its
 * place among the problem's replies that counted against `--max-candidates`, in the order they
 * came (1, 2, …; a reply without code takes its number too). Progress views show the number: it
 * matches the candidate count (`usage.candidates`) beside it.
 */
interface ProblemEventBase {
  /** The problem's name (file stem). */
  problem: string;
  problemHash: string;
  usage: BudgetUsage;
}

/**
 * What an optimize run reports while it works (noun-verb, like the store's events). The CLI turns
 * these into progress lines or a live view; nothing here is printed by the library itself.
 */
export type SearchEvent =
  | { type: 'run-started'; runId: string; problemCount: number; resumed: boolean }
  | (ProblemEventBase & { type: 'problem-started'; index: number; total: number; strategy: StrategyName })
  /** The model was asked for a kernel (or for ideas); its reply comes as `model-replied` or `model-call-failed`. */
  | (ProblemEventBase & { type: 'model-called' })
  | (ProblemEventBase & { type: 'model-replied'; tokens: number; costUsd: number; latencyMs: number })
  /** The provider failed to answer (after its own retries), or the wall-clock budget cut the call. */
  | (ProblemEventBase & { type: 'model-call-failed'; message: string })
  /** The model will never answer again: a replay (`--provider files`) served its last reply. The normal end of a replay, not a failure. */
  | (ProblemEventBase & { type: 'model-exhausted'; message: string })
  /**
   * A candidate was handed to the evaluator (taken from a reply, or left pending by a stopped run):
   * until its first stage starts, it waits for a worker process, the device or a build slot.
   */
  | (ProblemEventBase & { type: 'candidate-submitted'; candidateId: number; candidateNumber: number })
  /** A stage of a candidate's evaluation started or finished (`build`, `reference`, `correctness`, `timing`, …). */
  | (ProblemEventBase & { type: 'candidate-stage'; candidateId: number; candidateNumber: number; progress: EvaluationProgress })
  | (ProblemEventBase & { type: 'reply-without-code'; reason: string })
  | (ProblemEventBase & {
      type: 'candidate-evaluated';
      candidateId: number;
      candidateNumber: number;
      verdict: Verdict;
      speedup: number | null;
      deviceMs: number;
      reused: boolean;
    })
  | (ProblemEventBase & { type: 'best-improved'; candidateId: number; speedup: number | null; medianMs: number })
  | (ProblemEventBase & { type: 'problem-stalled'; candidatesWithoutImprovement: number; policy: StallPolicy })
  | (ProblemEventBase & { type: 'strategy-switched'; from: StrategyName; to: StrategyName })
  | (ProblemEventBase & { type: 'problem-finished'; reason: ProblemEndReason })
  /** A person's action (a stop, a hint, an edited candidate) could not be applied; the run goes on. */
  | { type: 'intervention-failed'; runId: string; message: string }
  | { type: 'run-finished'; runId: string; status: 'finished' | 'stopped' | 'paused' | 'failed' };

/** Receives search events; must not throw. */
export type SearchEventListener = (event: SearchEvent) => void;
