import type { BackendDoctor, ToolCheck } from '../backend-module.js';
import { NVIDIA_GPU_CHECK, NVIDIA_REQUIRES } from '../nvidia/nvidia-doctor.js';
import { CPP_EXTENSION_CHECKS } from '../shared-checks.js';

/** `kforge doctor`'s nvcc line: the CUDA toolkit's compiler, which builds the candidate's `cuda_sources`. */
const NVCC_CHECK: ToolCheck = {
  id: 'nvcc',
  label: 'nvcc (CUDA toolkit)',
  command: 'nvcc',
  args: ['--version'],
  timeoutMs: 15_000,
  detail: (answer) => (answer.ok ? /release [\d.]+/.exec(answer.stdout)?.[0] || answer.stdout.trim().split('\n')[0]?.trim() || 'found' : 'not found'),
  fix: 'install the CUDA toolkit and put nvcc on PATH (or set CUDA_HOME)',
};

/** The cuda backend needs a GPU, a C++ toolchain for `load_inline` and nvcc. */
export const cudaDoctor: BackendDoctor = {
  requires: [...NVIDIA_REQUIRES, ...CPP_EXTENSION_CHECKS, NVCC_CHECK.id],
  tools: [NVIDIA_GPU_CHECK, NVCC_CHECK],
  packages: [],
};
