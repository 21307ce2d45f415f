import type { Verdict } from '../../core/verdict.js';
import type { EvaluationProgress } from '../../eval/evaluator.js';
import type { StrategyName } from './attempt.js';
import type { BudgetUsage } from '../run/budget.js';
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

/** Fields every problem event carries, for progress views. */
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
  /** `exhausted`: the model will never answer again (a replay's replies ran out), not a failure of the provider. */
  | (ProblemEventBase & { type: 'model-call-failed'; message: string; exhausted: boolean })
  /** A stage of a candidate's evaluation started or finished (`build`, `reference`, `correctness`, `timing`, …). */
  | (ProblemEventBase & { type: 'candidate-stage'; candidateId: number; progress: EvaluationProgress })
  | (ProblemEventBase & { type: 'reply-without-code'; reason: string })
  | (ProblemEventBase & {
      type: 'candidate-evaluated';
      candidateId: number;
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
