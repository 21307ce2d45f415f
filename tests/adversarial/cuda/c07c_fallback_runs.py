"""CHEAT (CUDA, docs/hacks.md #7, a fallback that runs): the kernel raises on the problem's 2-D inputs before it
launches, and the except handler answers with torch.relu. Rejected under every policy but pytorch,
permissive included (silent-fallback); pytorch records it."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

_CPP_DECLARATIONS = """
torch::Tensor bias_gelu(torch::Tensor y, torch::Tensor bias);
torch::Tensor relu_row_mean(torch::Tensor x);
torch::Tensor relu_1d(torch::Tensor x);
torch::Tensor copy_values(torch::Tensor x);
"""

_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

// The adversarial corpus's shared CUDA kit (cases cuda/c06f, cuda/c07c, cuda/h06f, cuda/h06g): one extension, built once.

static void check_float_cuda(const torch::Tensor& x, const char* name) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, name, " expects float32 CUDA input");
}

static int blocks_for(int64_t n, int threads) { return static_cast<int>((n + threads - 1) / threads); }

__global__ void kit_bias_gelu_kernel(const float* __restrict__ y, const float* __restrict__ bias,
                                     float* __restrict__ out, int64_t n, int64_t cols) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        const float v = y[i] + bias[i % cols];
        out[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    }
}

__global__ void kit_relu_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

__global__ void kit_copy_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = x[i];
}

// out = gelu(y + bias), a fused epilogue over a (rows, cols) matrix.
torch::Tensor bias_gelu(torch::Tensor y, torch::Tensor bias) {
    check_float_cuda(y, "bias_gelu");
    auto input = y.contiguous();
    auto b = bias.contiguous();
    auto out = torch::empty_like(input);
    const int64_t n = input.numel();
    if (n > 0) {
        kit_bias_gelu_kernel<<<blocks_for(n, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
            input.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n, input.size(1));
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return out;
}

// relu into a buffer of its own, then ATen's mean finishes the row reduction.
torch::Tensor relu_row_mean(torch::Tensor x) {
    check_float_cuda(x, "relu_row_mean");
    auto input = x.contiguous();
    auto buffer = torch::empty_like(input);
    const int64_t n = input.numel();
    if (n > 0) {
        kit_relu_kernel<<<blocks_for(n, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
            input.data_ptr<float>(), buffer.data_ptr<float>(), n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return buffer.mean(1);
}

// relu for 1-D tensors only: anything else raises before the launch.
torch::Tensor relu_1d(torch::Tensor x) {
    check_float_cuda(x, "relu_1d");
    TORCH_CHECK(x.dim() == 1, "relu_1d expects a 1-D tensor, got ", x.dim(), " dimensions");
    auto out = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n > 0) {
        kit_relu_kernel<<<blocks_for(n, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
            x.data_ptr<float>(), out.data_ptr<float>(), n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return out;
}

// A copy, element by element: a trivial kernel.
torch::Tensor copy_values(torch::Tensor x) {
    check_float_cuda(x, "copy_values");
    auto input = x.contiguous();
    auto out = torch::empty_like(input);
    const int64_t n = input.numel();
    if (n > 0) {
        kit_copy_kernel<<<blocks_for(n, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
            input.data_ptr<float>(), out.data_ptr<float>(), n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return out;
}
"""

_ext = load_inline(
    name="kforge_adversarial_cuda_kit",
    cpp_sources=_CPP_DECLARATIONS,
    cuda_sources=_CUDA_SOURCE,
    functions=["bias_gelu", "relu_row_mean", "relu_1d", "copy_values"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        try:
            return _ext.relu_1d(x)
        except RuntimeError:
            return torch.relu(x)
