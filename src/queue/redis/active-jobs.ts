import type { HeartbeatJob } from './queue-worker-heartbeat.js';

/** A job a worker is evaluating: what its heartbeat shows, and how to return it to the queue. */
export interface ActiveJob extends HeartbeatJob {
  /** Aborted to return the job to the queue unfinished (a second Ctrl-C of the worker). */
  readonly returnController: AbortController;
  /** Aborted when a coordinator asked to cancel the job. */
  readonly cancelController: AbortController;
}

/** The jobs a worker is evaluating now, by job id, for its heartbeat and its shutdown. */
export class ActiveJobs {
  readonly #jobs = new Map<string, ActiveJob>();

  /** Starts tracking a job; the returned function stops it. */
  add(job: Omit<ActiveJob, 'returnController' | 'cancelController' | 'stage' | 'device'>): { job: ActiveJob; remove: () => void } {
    const active: ActiveJob = { ...job, stage: null, device: null, returnController: new AbortController(), cancelController: new AbortController() };
    this.#jobs.set(job.jobId, active);
    return { job: active, remove: () => void (this.#jobs.get(job.jobId) === active && this.#jobs.delete(job.jobId)) };
  }

  get(jobId: string): ActiveJob | undefined {
    return this.#jobs.get(jobId);
  }

  get size(): number {
    return this.#jobs.size;
  }

  ids(): string[] {
    return [...this.#jobs.keys()];
  }

  /** The jobs as a heartbeat lists them. */
  describe(): HeartbeatJob[] {
    return [...this.#jobs.values()].map(({ returnController: _return, cancelController: _cancel, ...job }) => ({ ...job }));
  }

  /** Asks every job to go back to the queue unfinished. */
  returnAll(): void {
    for (const job of this.#jobs.values()) job.returnController.abort(new Error('the worker is stopping: the job goes back to the queue'));
  }
}
