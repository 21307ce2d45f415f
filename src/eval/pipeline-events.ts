/** Who holds part of a device's memory budget (locks/memory-budget.ts), for a waiting process's message. */
export interface BudgetHolder {
  pid: number;
  label: string;
  /** Bytes it holds. */
  bytes: number;
  /** When it took them (ISO 8601). */
  since: string;
  /** `evaluation`: a lease's grant; `context`: a worker's CUDA context, held outside any lease. */
  kind: 'evaluation' | 'context';
}

/**
 * What a pipelined evaluation reports besides its stages, in order: the build waits for its
 * folder and a build slot, builds (or finds it built), waits for the device, holds it, frees it.
 * Times are in milliseconds.
 */
export type PipelineEvent =
  | { kind: 'build-started'; device: string; buildKey: string | null; previouslyBuilt: boolean; waitedMs: number }
  | { kind: 'build-finished'; device: string; buildKey: string | null; built: boolean; cacheHit: boolean | null; durationMs: number | null }
  | { kind: 'device-waiting'; device: string; reason: 'lock'; holder: { pid: number | null; command: string | null } }
  | {
      kind: 'device-waiting';
      device: string;
      reason: 'memory';
      neededBytes: number;
      freeBytes: number;
      capacityBytes: number;
      holders: BudgetHolder[];
      /** Set when a worker's context waits: the cap on what contexts outside a lease may hold. */
      contextCapBytes?: number | undefined;
    }
  | { kind: 'device-acquired'; device: string; waitedMs: number }
  | { kind: 'device-released'; device: string; heldMs: number };
