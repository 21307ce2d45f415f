import type { BackendBuild } from '../backend-module.js';

/** A cpu build depends on no GPU toolchain: the host compiler and processor are keyed for every backend. */
export const cpuBuild: BackendBuild = {
  toolchainKey: () => ({ capability: null, nvcc: null, arch_list: null }),
};
