import type { WorkerRole } from '../worker-role.js';

export interface ProtocolErrorContext {
  /** The offending fd-3 line, shortened for quoting. */
  line?: string;
  role?: WorkerRole | undefined;
  cause?: unknown;
}

/**
 * A worker wrote something on fd 3 that protocol version 1 does not allow: a line that is not
 * JSON, an unknown message, or a message out of order. Either the worker has a bug or a candidate
 * wrote to the channel; the evaluation ends as `crashed` with check `protocol`. It is data carried
 * in a result, not thrown across the evaluator's boundary.
 */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  readonly line: string | undefined;
  readonly role: WorkerRole | undefined;

  constructor(reason: string, context: ProtocolErrorContext = {}) {
    super(reason, context.cause === undefined ? undefined : { cause: context.cause });
    this.line = context.line;
    this.role = context.role;
  }
}
