import type { BackendDoctor } from '../backend-module.js';
import { CPP_EXTENSION_CHECKS, WORKER_CHECKS } from '../shared-checks.js';

/** The cpu backend needs a worker and a C++ toolchain for `load_inline`, nothing of its own. */
export const cpuDoctor: BackendDoctor = {
  requires: [...WORKER_CHECKS, ...CPP_EXTENSION_CHECKS],
  tools: [],
  packages: [],
};
