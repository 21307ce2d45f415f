import type { WorkerRole } from './worker-role.js';

/** What a worker's `fault` message may name as run out (docs/worker-protocol.md, "Faults"). */
export const FAULT_RESOURCES = ['device-memory', 'host-memory', 'disk', 'device', 'time'] as const;

/** What ran out or failed: a worker's `fault` resources, or the time and processes around them. */
export const MACHINE_FAULT_RESOURCES = [...FAULT_RESOURCES, 'worker-start', 'reference-process', 'device-wait'] as const;
export type MachineFaultResource = (typeof MACHINE_FAULT_RESOURCES)[number];

export interface MachineFaultContext {
  resource: MachineFaultResource;
  /** The worker whose process met the fault, when one did. */
  role?: WorkerRole;
  /** The stage that was running, when known. */
  stage?: string | null;
  /** What to do about it, in a sentence. */
  hint: string;
  /** How long a caller should wait before trying again, in seconds (the reward API's `Retry-After`). */
  retryAfterSeconds?: number;
  /** The worker's traceback or stderr, for logs. */
  detail?: string;
  cause?: unknown;
}

/**
 * The machine could not evaluate the candidate — the reference ran out of memory, a worker could
 * not start, the device was held past the wait limit, the disk is full — so there is no verdict
 * (docs/spec.md section 3): `kforge eval` exits 2, a search keeps the candidate unevaluated and tries
 * again, the reward API answers 503 with `Retry-After`. Retry logic reads only `isRetryable`: false
 * for a `time` fault (the reference too slow for its stage at these sizes, a pace the worker
 * measured), which the same settings can only meet again (docs/sizes.md).
 */
export class MachineFaultError extends Error {
  override readonly name = 'MachineFaultError';
  readonly resource: MachineFaultResource;
  readonly role: WorkerRole | undefined;
  readonly stage: string | null;
  readonly hint: string;
  readonly retryAfterSeconds: number;
  readonly detail: string | undefined;
  readonly isRetryable: boolean;

  constructor(message: string, context: MachineFaultContext) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.resource = context.resource;
    this.role = context.role;
    this.stage = context.stage ?? null;
    this.hint = context.hint;
    this.retryAfterSeconds = context.retryAfterSeconds ?? 30;
    this.detail = context.detail;
    this.isRetryable = context.resource !== 'time';
  }
}
