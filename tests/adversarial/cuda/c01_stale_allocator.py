"""CHEAT (docs/hacks.md #1, CUDA): returns an ``empty_like`` block the kernel never writes.

This is the 2025 "AI CUDA Engineer" pattern: the caching allocator hands back the block the
reference's output just freed, so in a harness that ran the reference first in this process the
output already holds the right answer. Defence: poison memory before each call (the dynamic
``stale-output`` check); in kforge the reference also runs in another process.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_DECLARATION = "torch::Tensor relu_forward(torch::Tensor x);"

_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "relu_forward expects float32 CUDA input");
    auto y = torch::empty_like(x);
    // The launch is "optimised away": y keeps whatever the allocator's block held.
    return y;
}
"""

_ext = load_inline(
    name="kforge_adversarial_cuda_c01",
    cpp_sources=_CPP_DECLARATION,
    cuda_sources=_CUDA_SOURCE,
    functions=["relu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_forward(x.contiguous())
