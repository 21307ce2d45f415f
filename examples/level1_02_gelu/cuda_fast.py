"""Tanh-GELU as one CUDA kernel: y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) in a single pass
(eager runs about eight kernels), float4 loads and stores, a grid-stride loop, the scalar tail handled
by the same kernel. Memory-bound: the goal is the copy bandwidth.

float32 only; launches on PyTorch's current stream and checks the launch.
"""
import torch
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = "torch::Tensor gelu_tanh_forward(torch::Tensor x);"

_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>

__device__ __forceinline__ float gelu1(float v) {
    const float inner = 0.7978845608028654f * (v + 0.044715f * v * v * v);
    return 0.5f * v * (1.0f + tanhf(inner));
}

__global__ void gelu_tanh_kernel(const float4* __restrict__ in4, float4* __restrict__ out4, int64_t n4,
                                 const float* __restrict__ in, float* __restrict__ out, int64_t n) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (int64_t i = first; i < n4; i += stride) {
        float4 v = in4[i];
        v.x = gelu1(v.x); v.y = gelu1(v.y); v.z = gelu1(v.z); v.w = gelu1(v.w);
        out4[i] = v;
    }
    const int64_t tail = 4 * n4 + first;
    if (tail < n) out[tail] = gelu1(in[tail]);
}

__global__ void gelu_tanh_scalar_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t n) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = gelu1(in[i]);
}

torch::Tensor gelu_tanh_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "gelu_tanh_forward: expected a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "gelu_tanh_forward: expected float32, got ", x.scalar_type());
    const c10::cuda::CUDAGuard device_guard(x.device());
    torch::Tensor input = x.contiguous();
    torch::Tensor out = torch::empty_like(input);
    const int64_t n = input.numel();
    if (n == 0) return out;
    const float* in_ptr = input.data_ptr<float>();
    float* out_ptr = out.data_ptr<float>();
    const int threads = 256;
    const int64_t max_blocks = static_cast<int64_t>(at::cuda::getCurrentDeviceProperties()->multiProcessorCount) * 32;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const bool aligned = (reinterpret_cast<uintptr_t>(in_ptr) % 16 == 0) && (reinterpret_cast<uintptr_t>(out_ptr) % 16 == 0);
    if (aligned) {
        const int64_t n4 = n / 4;
        const int64_t work = n4 > 0 ? n4 : 1;
        const int64_t blocks = std::min<int64_t>((work + threads - 1) / threads, max_blocks);
        gelu_tanh_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
            reinterpret_cast<const float4*>(in_ptr), reinterpret_cast<float4*>(out_ptr), n4, in_ptr, out_ptr, n);
    } else {
        const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, max_blocks);
        gelu_tanh_scalar_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(in_ptr, out_ptr, n);
    }
    const cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "gelu kernel launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

_extension = load_inline(
    name="kforge_example_gelu_tanh_cuda",
    cpp_sources=_CPP_SOURCE,
    cuda_sources=_CUDA_SOURCE,
    functions=["gelu_tanh_forward"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(torch.nn.Module):
    """Same interface as the problem's Model: no parameters, forward(x)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _extension.gelu_tanh_forward(x)
