import type { BackendPrompt } from '../backend-module.js';

/** How a cuda candidate is written: C++ and CUDA sources through `load_inline`, on the current stream. */
export const cudaPrompt: BackendPrompt = {
  rules: [
    'Build with `torch.utils.cpp_extension.load_inline(name=..., cpp_sources=..., cuda_sources=..., functions=[...])`: C++ declarations in `cpp_sources`, kernels and their launchers in `cuda_sources`.',
    "Do not pass `-arch`/`-gencode` flags: the harness sets the GPU's own architecture. Launch on the current stream (`at::cuda::getCurrentCUDAStream()`) and check launches (`C10_CUDA_KERNEL_LAUNCH_CHECK()`).",
    'PyTorch builds with `__CUDA_NO_HALF_OPERATORS__` and `__CUDA_NO_HALF_CONVERSIONS__`: for half/bfloat16 use the intrinsics (`__hadd`, `__hmul`, `__float2half`, `__half2float`), not `+`/`*` on `half`.',
    'A vendor library call (cuBLAS, cuDNN) is allowed only followed by your own fused kernel on the current stream; in `forward`, no torch compute ops, only glue such as `.contiguous()`, `.view()`, `torch.empty_like` and the call into your extension.',
  ],
};
