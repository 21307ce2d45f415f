import type { EvaluationResult } from '../core/verdict.js';
import type { EvaluationProgress, EvaluationRequest } from '../eval/evaluator.js';
import type { PipelineEvent } from '../eval/pipeline-events.js';

/** Events of a {@link JobQueue}, by name; `jobId` ties them to one `submit`. Times in ms. */
export interface JobQueueEvents {
  'job-queued': { jobId: string; request: EvaluationRequest };
  'job-started': { jobId: string; waitedMs: number };
  /** A stage of a worker started or ended. */
  'job-progress': { jobId: string; progress: EvaluationProgress };
  /** The pipeline built, took or freed a device for the job. */
  'job-pipeline': { jobId: string; event: PipelineEvent };
  'job-finished': { jobId: string; result: EvaluationResult; durationMs: number };
  /** The evaluator itself failed (setup fault) or the job was cancelled; `submit` rejects with `error`. */
  'job-failed': { jobId: string; error: unknown; durationMs: number };
}
export type JobQueueEventName = keyof JobQueueEvents;

export interface JobSubmitOptions {
  /** Aborting cancels the job: it leaves the queue, or its workers are killed. */
  signal?: AbortSignal;
  /** Caller's id for the job (unique among jobs not yet finished); generated otherwise. */
  jobId?: string;
}

/** Jobs by state, now. */
export interface JobQueueCounts {
  waiting: number;
  running: number;
  finished: number;
  failed: number;
}

/**
 * Where evaluations are dispatched. Implementations decide where and when a job runs (in this
 * process, or on any of several machines sharing a queue); callers see one promise per job and
 * typed events. Requests and results are plain JSON, so a job can cross a process boundary.
 * A candidate's failure is a result (a verdict), never a rejection; `submit` rejects only when
 * the job was cancelled or the evaluator could not run.
 */
export interface JobQueue {
  submit(request: EvaluationRequest, options?: JobSubmitOptions): Promise<EvaluationResult>;
  /** Adds a listener; the returned function removes it. */
  on<E extends JobQueueEventName>(event: E, listener: (payload: JobQueueEvents[E]) => void): () => void;
  counts(): JobQueueCounts;
  /**
   * Stops accepting jobs and waits for those already submitted; with `cancel`, aborts them instead.
   * Frees what the queue holds (idle workers).
   */
  close(options?: { cancel?: boolean }): Promise<void>;
}
