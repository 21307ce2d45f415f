import type { BackendBuild } from '../backend-module.js';
import { nvidiaBuild } from '../nvidia/nvidia-build.js';

/** A cuda build depends on the GPU's toolchain (src/backends/nvidia/). */
export const cudaBuild: BackendBuild = nvidiaBuild;
