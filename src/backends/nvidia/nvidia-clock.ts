import type { BackendClock } from '../backend-module.js';

/**
 * Timed by CUDA events, with a warm-up by time of one second: a card that meets its power cap
 * lowers its clock within the first second of a heavy kernel, and figures timed before it settled
 * moved by up to 1.65% between processes (docs/benchmarks/timing-h200.md, the clock probe).
 */
export const nvidiaClock: BackendClock = {
  clock: 'device',
  defaultWarmupMs: 1000,
  timeLabel: 'GPU time',
};
