import type { Backend } from '../../core/verdict.js';
import type { Evaluator } from '../../eval/evaluator.js';

/** The evaluator a command evaluates with, and how to let it go when the command ends. */
export interface OpenedEvaluator {
  evaluator: Evaluator;
  /**
   * Frees what it holds: a local pipeline's warm workers and device locks; a remote one's job queue
   * (with `cancel`, its jobs still waiting or running are cancelled, else they are waited for).
   */
  close(options?: { cancel?: boolean }): Promise<void>;
  /**
   * Starts a local pipeline's worker processes for a backend now, before the first evaluation asks
   * for them (Python and PyTorch take seconds to start); absent where there is nothing to start.
   * Never throws: a backend that cannot start is reported by the first evaluation.
   */
  warmUp?(backend: Backend): void;
}
