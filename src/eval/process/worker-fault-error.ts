import type { WorkerRole } from '../worker-role.js';

export interface WorkerFaultContext {
  role: WorkerRole;
  stage: string | null;
  /** The worker's stderr (its traceback). */
  stderr: string;
  cause?: unknown;
}

/**
 * A fault of kforge itself, not of the candidate: the reference worker (which never imports the
 * candidate) ended with a traceback, died, or broke the protocol. There is no verdict: `kforge
 * eval` exits 3, a search keeps the candidate unevaluated, the reward API answers 503.
 */
export class WorkerFaultError extends Error {
  override readonly name = 'WorkerFaultError';
  readonly role: WorkerRole;
  readonly stage: string | null;
  readonly stderr: string;
  readonly isRetryable = true;
  readonly retryAfterSeconds = 30;

  constructor(message: string, context: WorkerFaultContext) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.role = context.role;
    this.stage = context.stage;
    this.stderr = context.stderr;
  }
}
