import type { BackendDetect } from '../backend-module.js';
import { nvidiaDetect } from '../nvidia/nvidia-detect.js';

/** The cuda backend evaluates on the visible NVIDIA GPUs (src/backends/nvidia/). */
export const cudaDetect: BackendDetect = nvidiaDetect;
