/**
 * The ids of `kforge doctor`'s shared checks (src/cli/doctor/doctor-checks.ts) that backends
 * list in their `doctor.ts`: what every worker needs, and what a C++ extension build needs.
 */
export const WORKER_CHECKS = ['python', 'torch', 'numpy', 'worker'] as const;

/** What `load_inline` needs to build a C++ or CUDA extension. */
export const CPP_EXTENSION_CHECKS = ['python-headers', 'torch-headers', 'g++', 'ninja'] as const;
