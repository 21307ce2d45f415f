import type { WorkerProcessResult } from '../src/eval/process/worker-process-types.js';

/** How a worker process ended, for tests of what its end means: a clean exit of a `role` worker unless `fields` say otherwise. */
export function endedWorker(role: WorkerProcessResult['role'], fields: Partial<WorkerProcessResult> = {}): WorkerProcessResult {
  return {
    role,
    pid: 42,
    exitCode: 0,
    signal: null,
    timedOut: null,
    timeLimitMs: null,
    stage: null,
    cancelled: false,
    protocolError: null,
    spawnError: null,
    durationMs: 10,
    stdout: '',
    stderr: '',
    droppedBytes: { stdout: 0, stderr: 0 },
    stageDurationsMs: {},
    ...fields,
  };
}
