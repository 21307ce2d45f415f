import { backendModule } from '../../backends/registry.js';
import type { Backend } from '../../core/verdict.js';
import type { LaneKind } from '../../eval/pipeline/pipeline-lane.js';

/** The queue name when none is given (`--queue`). */
export const DEFAULT_QUEUE_NAME = 'kforge';

/** Queue names: letters, digits, `_`, `.` and `-` (BullMQ forbids `:`), at most 64 characters. */
export const QUEUE_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** The lane that evaluates a backend, its `detect.kind`: jobs of every GPU backend run on GPU workers. */
export function laneOfBackend(backend: Backend): LaneKind {
  return backendModule(backend).detect.kind;
}

/** The BullMQ queue of a lane, e.g. `kforge-cpu`: a cpu worker never takes a GPU job. */
export function bullmqQueueName(queueName: string, lane: LaneKind): string {
  return `${queueName}-${lane}`;
}

/** The Redis keys kforge keeps beside BullMQ's for one queue name. */
export interface QueueRedisKeys {
  /** A worker's heartbeat (a JSON string with a TTL). */
  worker(workerId: string): string;
  /** SCAN pattern of every heartbeat. */
  workerPattern: string;
  /** The list of a job's attempts (JSON strings). */
  attempts(jobId: string): string;
  /** Set while a job's cancellation is asked for. */
  cancel(jobId: string): string;
}

/** The keys of a queue name, under `kforge:<queue>:`. */
export function queueRedisKeys(queueName: string): QueueRedisKeys {
  const prefix = `kforge:${queueName}`;
  return {
    worker: (workerId) => `${prefix}:worker:${workerId}`,
    workerPattern: `${prefix}:worker:*`,
    attempts: (jobId) => `${prefix}:attempts:${jobId}`,
    cancel: (jobId) => `${prefix}:cancel:${jobId}`,
  };
}

/**
 * The lock key of one device of one host, shared by every queue: two workers on a host may not
 * own one GPU, whatever queues they serve.
 */
export function deviceLockKey(host: string, device: string): string {
  return `kforge:device:${host}:${device}`;
}
