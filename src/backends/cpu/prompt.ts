import type { BackendPrompt } from '../backend-module.js';

/** How a cpu candidate is written: C++ through `load_inline`, OpenMP allowed, no ATen compute. */
export const cpuPrompt: BackendPrompt = {
  rules: [
    'Build your C++ at import time with `torch.utils.cpp_extension.load_inline(name=..., cpp_sources=..., functions=[...], extra_cflags=["-O3", "-fopenmp"], extra_ldflags=["-fopenmp"])`. Pass `cpp_sources` and `functions`; there are no CUDA sources on this backend.',
    'OpenMP is allowed (`#pragma omp parallel for`), and so are SIMD-friendly loops the compiler can vectorise.',
    "In C++ read and write through `tensor.data_ptr<float>()` (or the run precision's type) and do the arithmetic in your own loops; do not call ATen compute functions (`at::relu`, `at::matmul`, `torch::softmax`, …).",
    'In `forward`, no torch compute ops: only glue such as `.contiguous()`, `.view()`, `.reshape()`, `torch.empty`/`torch.empty_like`, shape queries, and the call into your extension.',
  ],
};
