"""ReLU as a CUDA kernel: 16-byte (float4) loads and stores, a grid-stride loop, the scalar tail
handled by the same kernel. Memory-bound: the goal is the copy bandwidth (read n, write n floats).

float32 only; launches on PyTorch's current stream and checks the launch.
"""
import torch
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = "torch::Tensor relu_forward(torch::Tensor x);"

_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>

__device__ __forceinline__ float relu1(float v) { return v < 0.0f ? 0.0f : v; }  // keeps NaN, like torch

// Elements [0, 4 * n4) as float4 through a grid-stride loop; the last n % 4 by the first threads.
__global__ void relu_kernel(const float4* __restrict__ in4, float4* __restrict__ out4, int64_t n4,
                            const float* __restrict__ in, float* __restrict__ out, int64_t n) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (int64_t i = first; i < n4; i += stride) {
        float4 v = in4[i];
        v.x = relu1(v.x); v.y = relu1(v.y); v.z = relu1(v.z); v.w = relu1(v.w);
        out4[i] = v;
    }
    const int64_t tail = 4 * n4 + first;
    if (tail < n) out[tail] = relu1(in[tail]);
}

// Scalar version for inputs whose data is not 16-byte aligned.
__global__ void relu_scalar_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t n) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = relu1(in[i]);
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "relu_forward: expected a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "relu_forward: expected float32, got ", x.scalar_type());
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
        relu_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
            reinterpret_cast<const float4*>(in_ptr), reinterpret_cast<float4*>(out_ptr), n4, in_ptr, out_ptr, n);
    } else {
        const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, max_blocks);
        relu_scalar_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(in_ptr, out_ptr, n);
    }
    const cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "relu kernel launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

_extension = load_inline(
    name="kforge_example_relu_cuda",
    cpp_sources=_CPP_SOURCE,
    cuda_sources=_CUDA_SOURCE,
    functions=["relu_forward"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(torch.nn.Module):
    """Same interface as the problem's Model: no parameters, forward(x)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _extension.relu_forward(x)
