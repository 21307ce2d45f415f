import type { BackendClock } from '../backend-module.js';
import { nvidiaClock } from '../nvidia/nvidia-clock.js';

/** The cuda backend is timed by CUDA events, after a warm-up by time (src/backends/nvidia/). */
export const cudaClock: BackendClock = nvidiaClock;
