import type { BackendPrompt } from '../backend-module.js';

/** How a triton candidate is written: `@triton.jit` kernels launched from `forward`. */
export const tritonPrompt: BackendPrompt = {
  rules: [
    'Write the work as `@triton.jit` kernels and launch them from `forward` with an explicit grid; `import triton` and `import triton.language as tl`.',
    'In `forward`, no torch compute ops: only glue such as `.contiguous()`, `.view()`, `torch.empty_like` for outputs, shape queries and the kernel launches.',
    "Pick `BLOCK_SIZE`s as `tl.constexpr` powers of two and mask the tails; do not assume the benchmark's exact shape.",
  ],
};
