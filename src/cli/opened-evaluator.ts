import type { Evaluator } from '../eval/evaluator.js';

/** The evaluator a command evaluates with, and how to let it go when the command ends. */
export interface OpenedEvaluator {
  evaluator: Evaluator;
  /**
   * Frees what it holds: a local pipeline's warm workers and device locks; a remote one's job queue
   * (with `cancel`, its jobs still waiting or running are cancelled, else they are waited for).
   */
  close(options?: { cancel?: boolean }): Promise<void>;
}
