import { randomUUID } from 'node:crypto';
import type { EvaluationResult } from '../core/verdict.js';
import type { EvaluationRequest, Evaluator } from './evaluator.js';
import type { JobQueue } from './job-queue.js';
import type { PipelinedEvaluateOptions } from './pipeline-events.js';

/** A result through the queue, with the times the queue reported, in ms. */
export interface QueuedEvaluationResult {
  result: EvaluationResult;
  /** From submission until a worker started the job (0 when it never showed as started, e.g. a reused result). */
  waitedMs: number;
  /** The job's evaluation time as the queue reports it (0 for a result stored before this submission). */
  durationMs: number;
}

/**
 * The {@link Evaluator} over a {@link JobQueue}: `evaluate` submits the request (a
 * BullmqJobQueue reads the two files at the request's paths into the job's payload) and returns
 * its result; progress and pipeline events of the job reach `onProgress` and `onPipelineEvent`.
 * So `kforge optimize` evaluates through Redis workers unchanged.
 *
 * @example
 * const evaluator = new JobQueueEvaluator(await openRedisJobQueue({ url }));
 * const result = await evaluator.evaluate(request);
 */
export class JobQueueEvaluator implements Evaluator {
  readonly #queue: JobQueue;
  readonly #createJobId: () => string;

  constructor(queue: JobQueue, options: { createJobId?: () => string } = {}) {
    this.#queue = queue;
    this.#createJobId = options.createJobId ?? randomUUID;
  }

  async evaluate(request: EvaluationRequest, options: PipelinedEvaluateOptions = {}): Promise<EvaluationResult> {
    return (await this.evaluateTimed(request, options)).result;
  }

  /** {@link evaluate} with the waiting and evaluation times the queue reported. */
  async evaluateTimed(request: EvaluationRequest, options: PipelinedEvaluateOptions = {}): Promise<QueuedEvaluationResult> {
    const jobId = this.#createJobId();
    let waitedMs = 0;
    let durationMs = 0;
    const unsubscribe = [
      this.#queue.on('job-started', (event) => {
        if (event.jobId === jobId) waitedMs = event.waitedMs;
      }),
      this.#queue.on('job-finished', (event) => {
        if (event.jobId === jobId) durationMs = event.durationMs;
      }),
      this.#queue.on('job-progress', (event) => void (event.jobId === jobId && options.onProgress?.(event.progress))),
      this.#queue.on('job-pipeline', (event) => void (event.jobId === jobId && options.onPipelineEvent?.(event.event))),
    ];
    try {
      const result = await this.#queue.submit(request, { jobId, ...(options.signal ? { signal: options.signal } : {}) });
      return { result, waitedMs, durationMs };
    } finally {
      for (const remove of unsubscribe) remove();
    }
  }
}
