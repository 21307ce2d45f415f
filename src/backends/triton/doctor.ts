import type { BackendDoctor, PackageCheck } from '../backend-module.js';
import { NVIDIA_GPU_CHECK, NVIDIA_REQUIRES } from '../nvidia/nvidia-doctor.js';

/** `kforge doctor`'s Triton line: the `triton` distribution the candidate imports. */
const TRITON_PACKAGE: PackageCheck = { id: 'triton', label: 'Triton', distribution: 'triton', fix: 'pip install triton' };

/** The triton backend needs a GPU and Triton; it builds no C++ extension. */
export const tritonDoctor: BackendDoctor = {
  requires: [...NVIDIA_REQUIRES, TRITON_PACKAGE.id],
  tools: [NVIDIA_GPU_CHECK],
  packages: [TRITON_PACKAGE],
};
