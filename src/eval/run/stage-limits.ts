import type { StageTimeoutsSeconds } from '../evaluator.js';
import type { Stage } from '../process/protocol.js';

/**
 * Default per-stage limits in seconds. Builds and torch.compile baselines dominate: an inline CUDA
 * build takes 35–99 s on a 16-core host and a C++ one about 45 s on 2 cores; `startup` covers
 * importing torch and also bounds any wait outside a stage.
 */
export const DEFAULT_STAGE_TIMEOUTS_SECONDS: StageTimeoutsSeconds = {
  startup: 300,
  build: 600,
  load: 120,
  correctness: 300,
  timing: 600,
  reference: 300,
  baseline: 900,
  judge: 300,
};

/** The command-line flag that raises each limit, for messages. */
const LIMIT_FLAGS: Record<string, string> = {
  startup: '--timeout-startup',
  idle: '--timeout-startup',
  build: '--timeout-build',
  load: '--timeout-load',
  correctness: '--timeout-correctness',
  timing: '--timeout-timing',
  reference: '--timeout-reference',
  baseline: '--timeout-baseline',
  judge: '--timeout-judge',
};

/** The flag that raises the limit of `stage` (a stage, or `idle`); `--timeout-startup` for any other. */
export function limitFlag(stage: string | null | undefined): string {
  return (stage && LIMIT_FLAGS[stage]) || '--timeout-startup';
}

/** The stage limits in milliseconds, defaults filled in. */
export function stageLimitsMs(overrides: Partial<StageTimeoutsSeconds> = {}): {
  stages: Record<Stage, number>;
  idleMs: number;
} {
  const seconds = { ...DEFAULT_STAGE_TIMEOUTS_SECONDS, ...definedOnly(overrides) };
  const { startup, ...stages } = seconds;
  const stagesMs = Object.fromEntries(Object.entries(stages).map(([name, value]) => [name, value * 1000]));
  return { stages: stagesMs as Record<Stage, number>, idleMs: startup * 1000 };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
