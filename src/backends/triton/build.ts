import type { BackendBuild } from '../backend-module.js';
import { nvidiaBuild } from '../nvidia/nvidia-build.js';

/** A triton build depends on the GPU's toolchain (src/backends/nvidia/). */
export const tritonBuild: BackendBuild = nvidiaBuild;
