"""CHEAT (docs/hacks.md #14, silent launch failure): an invalid launch that nothing checks.

2048 threads per block exceeds the 1024 limit, so the kernel never runs, no error is raised, and
the ``empty_like`` output holds whatever its memory held (in a naive harness, the reference's
answer). Defences: poison outputs before the call (``stale-output``) and read the device's error
state after synchronising (``device-error``).
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
    auto input = x.contiguous();
    auto y = torch::empty_like(input);
    const int64_t n = input.numel();
    const int threads = 2048;  // more than the device allows per block
    const int blocks = static_cast<int>((n + threads - 1) / threads);
    relu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        input.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;  // no launch check
}
"""

_ext = load_inline(
    name="kforge_adversarial_cuda_c14",
    cpp_sources=_CPP_DECLARATION,
    cuda_sources=_CUDA_SOURCE,
    functions=["relu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_forward(x)
