import { Semaphore as CoreSemaphore } from '../../core/semaphore.js';
import { EvaluationCancelledError } from '../evaluation-cancelled-error.js';

export type { Release } from '../../core/semaphore.js';

/**
 * The evaluator's {@link CoreSemaphore}: an abort while waiting rejects with
 * {@link EvaluationCancelledError} and takes nothing.
 */
export class Semaphore extends CoreSemaphore {
  constructor(permits: number) {
    super(permits, { abortError: (reason) => new EvaluationCancelledError(reason) });
  }
}
