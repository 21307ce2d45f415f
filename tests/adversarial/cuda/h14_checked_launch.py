"""HONEST look-alike of #14: launch size from the device's limits, and every launch checked."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_DECLARATION = "torch::Tensor relu_forward(torch::Tensor x);"

_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>
#include <algorithm>

__global__ void relu_grid_stride(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
        const float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "relu_forward expects float32 CUDA input");
    auto input = x.contiguous();
    auto y = torch::empty_like(input);
    const int64_t n = input.numel();
    if (n == 0) {
        return y;
    }
    const cudaDeviceProp* props = at::cuda::getCurrentDeviceProperties();
    const int threads = std::min(256, props->maxThreadsPerBlock);
    const int64_t wanted = (n + threads - 1) / threads;
    const int blocks = static_cast<int>(std::min<int64_t>(wanted, static_cast<int64_t>(props->multiProcessorCount) * 32));
    relu_grid_stride<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        input.data_ptr<float>(), y.data_ptr<float>(), n);
    const cudaError_t status = cudaGetLastError();
    TORCH_CHECK(status == cudaSuccess, "relu launch failed: ", cudaGetErrorString(status));
    return y;
}
"""

_ext = load_inline(
    name="kforge_adversarial_cuda_h14",
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
