import { randomUUID } from 'node:crypto';
import type { EvaluationResult } from '../core/verdict.js';
import { EvaluationCancelledError } from '../eval/evaluation-cancelled-error.js';
import type { EvaluateOptions, EvaluationRequest, Evaluator } from '../eval/evaluator.js';
import { JobQueueClosedError } from './job-queue-closed-error.js';
import type { JobQueue, JobQueueCounts, JobQueueEventName, JobQueueEvents, JobSubmitOptions } from './job-queue.js';

/** Jobs handed to the evaluator at once by default: the pipelined evaluator bounds its own work below this. */
export const DEFAULT_JOB_CONCURRENCY = 256;

export interface InProcessJobQueueOptions {
  /** Usually a {@link PipelinedEvaluator}; any Evaluator works (pipeline events then never come). */
  evaluator: Evaluator;
  /** Jobs running in the evaluator at once; the rest wait in submission order. */
  concurrency?: number;
  /** Clock in ms (injected by tests). */
  now?: () => number;
  createJobId?: () => string;
  /** Called when a listener throws; by default the error is rethrown outside the queue (uncaught, as an EventEmitter's would be). */
  onListenerError?: (error: unknown, event: JobQueueEventName) => void;
}

interface Job {
  id: string;
  request: EvaluationRequest;
  submittedAtMs: number;
  controller: AbortController;
  signal: AbortSignal;
  resolve: (result: EvaluationResult) => void;
  reject: (error: unknown) => void;
  onAbort: () => void;
}

type Listener<E extends JobQueueEventName> = (payload: JobQueueEvents[E]) => void;

/**
 * The {@link JobQueue} that runs jobs in this process, through one evaluator. Nothing of a job is
 * kept after it settles, so memory stays flat over any number of jobs.
 *
 * @example
 * const queue = new InProcessJobQueue({ evaluator: new PipelinedEvaluator(options) });
 * queue.on('job-finished', ({ jobId, result }) => log(jobId, result.verdict));
 * const results = await Promise.all(requests.map((request) => queue.submit(request)));
 * await queue.close();
 */
export class InProcessJobQueue implements JobQueue {
  readonly #evaluator: InProcessJobQueueOptions['evaluator'];
  readonly #concurrency: number;
  readonly #now: () => number;
  readonly #createJobId: () => string;
  readonly #onListenerError: (error: unknown, event: JobQueueEventName) => void;
  readonly #waiting: Job[] = [];
  readonly #running = new Set<Job>();
  readonly #listeners = new Map<JobQueueEventName, Set<Listener<JobQueueEventName>>>();
  readonly #settled = new Set<() => void>();
  #finished = 0;
  #failed = 0;
  #closed = false;

  constructor(options: InProcessJobQueueOptions) {
    const concurrency = options.concurrency ?? DEFAULT_JOB_CONCURRENCY;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(`expected \`concurrency\` to be a positive integer, got ${concurrency}`);
    }
    this.#evaluator = options.evaluator;
    this.#concurrency = concurrency;
    this.#now = options.now ?? (() => performance.now());
    this.#createJobId = options.createJobId ?? randomUUID;
    this.#onListenerError =
      options.onListenerError ??
      ((error) =>
        queueMicrotask(() => {
          throw error;
        }));
  }

  submit(request: EvaluationRequest, options: JobSubmitOptions = {}): Promise<EvaluationResult> {
    if (this.#closed) return Promise.reject(new JobQueueClosedError());
    if (options.signal?.aborted) return Promise.reject(new EvaluationCancelledError(options.signal.reason));
    const controller = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
    return new Promise<EvaluationResult>((resolve, reject) => {
      const job: Job = {
        id: options.jobId ?? this.#createJobId(),
        request,
        submittedAtMs: this.#now(),
        controller,
        signal,
        resolve,
        reject,
        onAbort: () => this.#abortWaiting(job),
      };
      signal.addEventListener('abort', job.onAbort, { once: true });
      this.#waiting.push(job);
      this.#emit('job-queued', { jobId: job.id, request });
      this.#pump();
    });
  }

  on<E extends JobQueueEventName>(event: E, listener: Listener<E>): () => void {
    let listeners = this.#listeners.get(event);
    if (!listeners) {
      listeners = new Set();
      this.#listeners.set(event, listeners);
    }
    listeners.add(listener as Listener<JobQueueEventName>);
    return () => listeners.delete(listener as Listener<JobQueueEventName>);
  }

  counts(): JobQueueCounts {
    return { waiting: this.#waiting.length, running: this.#running.size, finished: this.#finished, failed: this.#failed };
  }

  async close(options: { cancel?: boolean } = {}): Promise<void> {
    this.#closed = true;
    if (options.cancel) for (const job of [...this.#waiting, ...this.#running]) job.controller.abort(new JobQueueClosedError());
    if (this.#waiting.length > 0 || this.#running.size > 0) {
      await new Promise<void>((resolve) => this.#settled.add(resolve));
    }
    await this.#evaluator.close?.();
  }

  #pump(): void {
    while (this.#running.size < this.#concurrency && this.#waiting.length > 0) {
      const job = this.#waiting.shift()!;
      this.#running.add(job);
      void this.#run(job);
    }
    if (this.#waiting.length === 0 && this.#running.size === 0) {
      for (const resolve of this.#settled) resolve();
      this.#settled.clear();
    }
  }

  async #run(job: Job): Promise<void> {
    const startedAtMs = this.#now();
    this.#emit('job-started', { jobId: job.id, waitedMs: startedAtMs - job.submittedAtMs });
    const options: EvaluateOptions = {
      signal: job.signal,
      onProgress: (progress) => this.#emit('job-progress', { jobId: job.id, progress }),
      onPipelineEvent: (event) => this.#emit('job-pipeline', { jobId: job.id, event }),
    };
    try {
      const { result } = await this.#evaluator.evaluate(job.request, options);
      this.#finished += 1;
      this.#emit('job-finished', { jobId: job.id, result, durationMs: this.#now() - startedAtMs });
      job.resolve(result);
    } catch (error) {
      this.#failed += 1;
      this.#emit('job-failed', { jobId: job.id, error, durationMs: this.#now() - startedAtMs });
      job.reject(error);
    } finally {
      job.signal.removeEventListener('abort', job.onAbort);
      this.#running.delete(job);
      this.#pump();
    }
  }

  /** A job aborted before it started leaves the queue; a running one is cancelled by the evaluator. */
  #abortWaiting(job: Job): void {
    const index = this.#waiting.indexOf(job);
    if (index < 0) return;
    this.#waiting.splice(index, 1);
    this.#failed += 1;
    const error = new EvaluationCancelledError(job.signal.reason);
    this.#emit('job-failed', { jobId: job.id, error, durationMs: 0 });
    job.reject(error);
    this.#pump();
  }

  #emit<E extends JobQueueEventName>(event: E, payload: JobQueueEvents[E]): void {
    for (const listener of this.#listeners.get(event) ?? []) {
      try {
        listener(payload);
      } catch (error) {
        // A listener's fault must not break the queue.
        this.#onListenerError(error, event);
      }
    }
  }
}
