import type { EvaluationMemory, RoleMemory } from '../../core/verdict.js';
import { MachineFaultError } from '../machine-fault-error.js';
import type { MessageOfType } from '../process/protocol.js';
import type { WorkerProcessResult } from '../process/worker-process-types.js';
import type { WorkerRole } from '../worker-role.js';
import { limitFlag } from './stage-limits.js';

/** What to do about each resource a worker's `fault` names (`time`: {@link timeHint}). */
const FAULT_HINTS: Record<Exclude<MessageOfType<'fault'>['resource'], 'time'>, string> = {
  'device-memory':
    'another process holds the device memory, or the problem does not fit at these sizes: wait and try again (kforge waits for room in the device memory budget by itself, docs/sizes.md), evaluate fewer candidates at once, or evaluate at smaller sizes (--set NAME=VALUE)',
  'host-memory': 'the host ran out of memory: evaluate fewer candidates at once or at smaller sizes (--set NAME=VALUE)',
  disk: 'free space in the scratch folder (TMPDIR) and in KFORGE_CACHE_DIR, then try again',
  device: "the device reported an error outside the candidate's code: check it (`nvidia-smi`, `kforge doctor`) and try again",
};

/** A stage of the reference role too slow at these sizes (its reference or judge stage): that stage's limit. */
function timeHint(stage: string | null): string {
  return `the reference is too slow at these sizes for its stage on this machine: evaluate at smaller sizes (--set NAME=VALUE, as the message suggests where the problem has a batch size), or raise the limit with ${limitFlag(stage ?? 'reference')} SECONDS`;
}

/** The {@link MachineFaultError} of a worker's `fault` message (no verdict). */
export function machineFault(role: WorkerRole, message: MessageOfType<'fault'>): MachineFaultError {
  const where = message.stage ? ` (${role} process, ${message.stage} stage)` : ` (${role} process)`;
  return new MachineFaultError(`the machine could not evaluate: ${message.message}${where}; no verdict`, {
    resource: message.resource,
    role,
    stage: message.stage,
    hint: message.resource === 'time' ? timeHint(message.stage) : FAULT_HINTS[message.resource],
    ...(message.traceback ? { detail: message.traceback } : {}),
  });
}

/** The largest of each peak over a worker's stages, and the stages themselves. */
function roleMemory(result: WorkerProcessResult): RoleMemory | null {
  const stages = result.stageMemory ?? {};
  const entries = Object.entries(stages);
  if (entries.length === 0) return null;
  const largest = (field: 'device_peak_bytes' | 'device_allocated_peak_bytes' | 'host_peak_bytes'): number | null => {
    const known = entries.map(([, memory]) => memory?.[field]).filter((value): value is number => typeof value === 'number');
    return known.length > 0 ? Math.max(...known) : null;
  };
  return {
    device_peak_bytes: largest('device_peak_bytes'),
    device_allocated_peak_bytes: largest('device_allocated_peak_bytes'),
    host_peak_bytes: largest('host_peak_bytes'),
    stages: { ...stages } as RoleMemory['stages'],
  };
}

/** The result's `memory`: each role's peaks, from the `memory` of its stages' `end` messages. */
export function memoryOfWorkers(results: readonly WorkerProcessResult[]): EvaluationMemory | undefined {
  const memory: EvaluationMemory = {};
  for (const result of results) {
    const role = roleMemory(result);
    if (role) memory[result.role] = role;
  }
  return Object.keys(memory).length > 0 ? memory : undefined;
}
