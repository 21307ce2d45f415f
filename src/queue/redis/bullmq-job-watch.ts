import path from 'node:path';
import type { EvaluationResult } from '../../core/verdict.js';
import type { EvaluationJobOutcome } from '../evaluation-job-messages.js';
import type { EvaluationJobPayload } from '../evaluation-job-payload.js';
import type { EvaluationRequest } from '../../eval/evaluator.js';
import type { PipelineEvent } from '../../eval/pipeline-events.js';
import type { LaneKind } from '../../eval/pipeline/pipeline-lane.js';

/** A finished job as {@link BullmqJobQueue.submitPayload} gives it: the worker's outcome and the job's id. */
export interface FinishedEvaluationJob extends EvaluationJobOutcome {
  /** The BullMQ job id (the content hash of the evaluation). */
  jobId: string;
  /** The result was in Redis already when this submission came: nothing was evaluated for it. */
  reused: boolean;
}

/** One `submit` waiting for its job. */
export interface Submitter {
  /** The id events carry (the caller's, or generated). */
  localId: string;
  request: EvaluationRequest;
  /** The result keeps the payload's names (a payload submission) instead of the request's paths. */
  names: boolean;
  submittedAtMs: number;
  startedAtMs: number | null;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  resolve: (job: FinishedEvaluationJob) => void;
  reject: (error: unknown) => void;
}

/** One job in Redis and the submissions waiting for it (several when equal requests were submitted). */
export interface JobWatch {
  jobId: string;
  lane: LaneKind;
  payload: EvaluationJobPayload;
  submitters: Set<Submitter>;
  /** An add (or a retry) is in flight. */
  enqueuing: boolean;
  /** A state check is in flight; `recheck` asks for one more after it. */
  checking: boolean;
  recheck: boolean;
  /** The job was already completed when this watch first looked: its result is reused. */
  reused: boolean;
  /** The job's `device-acquired` while it holds its device, told again to a submitter that joins late. */
  holding: Extract<PipelineEvent, { kind: 'device-acquired' }> | null;
}

/** The request a payload stands for, with its names as paths (for events of payload submissions). */
export function requestOfNames(payload: EvaluationJobPayload): EvaluationRequest {
  return { problemPath: payload.problem.name, candidatePath: payload.candidate.name, ...payload.options };
}

/**
 * A worker's result as the submitter sees it: `problem` and `candidate` are the paths it asked
 * about (as a local evaluator reports them), or the names of its payload, not the names of
 * whichever equal submission reached the worker first.
 */
export function resultForSubmitter(result: EvaluationResult, submitter: Submitter): EvaluationResult {
  const { problemPath, candidatePath } = submitter.request;
  return submitter.names
    ? { ...result, problem: problemPath, candidate: candidatePath }
    : { ...result, problem: path.resolve(problemPath), candidate: path.resolve(candidatePath) };
}
