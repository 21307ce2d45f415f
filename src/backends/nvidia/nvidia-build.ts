import type { BackendBuild } from '../backend-module.js';

function text(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value : null;
}

/**
 * A build for an NVIDIA GPU depends on the GPU's compute capability, nvcc and the
 * TORCH_CUDA_ARCH_LIST the parent passes (on cuda the worker sets it from the capability).
 */
export const nvidiaBuild: BackendBuild = {
  toolchainKey: (worker, parent) => ({
    capability: text(worker.capability),
    nvcc: text(worker.nvcc),
    arch_list: text(parent.TORCH_CUDA_ARCH_LIST),
  }),
};
