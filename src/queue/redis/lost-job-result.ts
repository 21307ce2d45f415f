import type { EvaluationResult } from '../../core/verdict.js';
import { assembleResult } from '../../eval/run/evaluation-result.js';
import { resolveEvaluationSettings } from '../../eval/run/evaluation-settings.js';
import type { JobAttempt } from '../evaluation-job-messages.js';
import { requestOfPayload, type EvaluationJobPayload } from '../evaluation-job-payload.js';
import { outcome } from '../../eval/run/outcome.js';

/** The check id of a job whose worker process died on every attempt. */
export const WORKER_LOST_CHECK = 'worker-lost';

function describeAttempt(attempt: JobAttempt): string {
  return `attempt ${attempt.attempt}: worker ${attempt.workerId} (host ${attempt.host}, pid ${attempt.pid}) took the job at ${attempt.startedAt} and died before finishing it`;
}

/**
 * The `crashed` result of a job started `attempts.length` times whose worker process died every
 * time (killed, out of memory, or killed by the candidate): it is not tried again. The reasons
 * say so and name each attempt; `diagnostics.stderr` lists the attempts one per line.
 */
export function workerLostResult(payload: EvaluationJobPayload, attempts: readonly JobAttempt[]): EvaluationResult {
  const settings = resolveEvaluationSettings(requestOfPayload(payload, { problemPath: payload.problem.name, candidatePath: payload.candidate.name }));
  const summary = outcome(
    'crashed',
    WORKER_LOST_CHECK,
    `the evaluation was started ${attempts.length} time${attempts.length === 1 ? '' : 's'} (the bound is ${payload.maxAttempts}) and each time the worker process evaluating it died before finishing; a candidate that takes its worker down is not tried again`,
  );
  summary.reasons.push(...attempts.map((attempt) => ({ check: WORKER_LOST_CHECK, message: describeAttempt(attempt) })));
  const result = assembleResult({
    settings,
    outcome: summary,
    output: { stdout: '', stderr: `${attempts.map(describeAttempt).join('\n')}\n`, droppedBytes: { stdout: 0, stderr: 0 } },
    stageDurationsMs: {},
    environment: null,
  });
  return { ...result, problem: payload.problem.name, candidate: payload.candidate.name };
}
