import type { StrategyName } from '../state/attempt.js';
import type { ProblemSession } from './problem-session.js';

/**
 * A search strategy: given one problem's session (its prompt context, budget, model, evaluation
 * queue and store, all behind `ProblemSession`), it decides what to ask the model, turn by turn,
 * and records each candidate's lineage (parent, idea, round). A strategy keeps no state of its own
 * between calls: it reads `session.history`, so a resumed run continues where it stopped.
 */
export interface SearchStrategy {
  readonly name: StrategyName;
  /** Works until `session.stopReason()` is set or the strategy has nothing left to try. */
  run(session: ProblemSession, signal: AbortSignal): Promise<void>;
}
