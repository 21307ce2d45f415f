import type { ToolCheck } from '../backend-module.js';
import { WORKER_CHECKS } from '../shared-checks.js';

/** `kforge doctor`'s GPU line: the GPUs nvidia-smi lists. */
export const NVIDIA_GPU_CHECK: ToolCheck = {
  id: 'gpu',
  label: 'GPUs (nvidia-smi)',
  command: 'nvidia-smi',
  args: ['--query-gpu=name,driver_version', '--format=csv,noheader'],
  timeoutMs: 15_000,
  found: (answer) => answer.ok && answer.stdout.trim().length > 0,
  detail: (answer) => (answer.ok ? answer.stdout.trim().split('\n').join('; ') : 'no NVIDIA GPU visible'),
  fix: 'install the NVIDIA driver so that `nvidia-smi` lists the GPU',
};

/** What every backend on an NVIDIA GPU needs: a worker, a visible GPU and a CUDA build of PyTorch. */
export const NVIDIA_REQUIRES = [...WORKER_CHECKS, NVIDIA_GPU_CHECK.id, 'torch-cuda'] as const;
