import type { Logger } from 'pino';
import { EvaluationCancelledError } from '../../eval/evaluation-cancelled-error.js';
import { MachineFaultError } from '../../eval/machine-fault-error.js';
import { WorkerFaultError } from '../../eval/process/worker-fault-error.js';
import { JobQueueClosedError } from '../../queue/job-queue-closed-error.js';
import { ApiError } from '../http/api-error.js';
import { RewardUnavailableError } from './reward-unavailable-error.js';

/**
 * What a reward request answers when its evaluation threw: the error itself when it is already an
 * answer; 503 `server-stopping` while the server stops; 422 `problem-too-slow` when the reference
 * outran its stage here; else 503 `evaluation-failed` (logged), never the candidate's fault.
 */
export function rewardFailure(error: unknown, stopping: boolean, logger: Logger): unknown {
  if (error instanceof ApiError || error instanceof RewardUnavailableError) return error;
  if (error instanceof EvaluationCancelledError || error instanceof JobQueueClosedError || stopping) {
    return new RewardUnavailableError('server-stopping', 'the reward server is stopping: retry against a running one', {
      cause: error,
      retryAfterSeconds: 10,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof MachineFaultError && error.resource === 'time') {
    // The reference is too slow at these sizes for its stage here: a retry would only fail again,
    // so this is the caller's problem to resize (docs/sizes.md), not a 503 to wait out.
    return new ApiError(
      422,
      'problem-too-slow',
      `the problem cannot be evaluated at these sizes on this server, whatever the candidate: ${message}; ${error.hint}`,
      {
        cause: error,
      },
    );
  }
  logger.error({ err: error }, 'a reward evaluation failed in the evaluator');
  const retryAfterSeconds = error instanceof MachineFaultError || error instanceof WorkerFaultError ? error.retryAfterSeconds : 5;
  return new RewardUnavailableError('evaluation-failed', `the evaluator could not evaluate the candidate (not the candidate's fault): ${message}`, {
    cause: error,
    retryAfterSeconds,
  });
}
