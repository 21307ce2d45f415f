import type { BackendClock } from '../backend-module.js';

/** Timed on the host's monotonic clock, with no warm-up by time: a CPU's clocks do not ramp. */
export const cpuClock: BackendClock = {
  clock: 'host',
  defaultWarmupMs: 0,
  timeLabel: 'CPU time',
};
