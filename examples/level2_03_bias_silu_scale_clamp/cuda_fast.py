"""Bias + SiLU + scale + clamp as one CUDA kernel (eager runs four): float4 loads and stores over the
tensor; each thread owns one float4 column (its bias stays in a register) and strides over rows.
silu(z) = z / (1 + exp(-z)) with __expf (a few ulp; saturates to 0 and to z correctly).
Memory-bound: one read and one write per element.

float32 only; the float4 path needs dim % 4 == 0 and 16-byte aligned pointers (a scalar kernel
covers the rest); launches on PyTorch's current stream and checks the launch.
"""
import torch
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = (
    "torch::Tensor bias_silu_scale_clamp_forward(torch::Tensor x, torch::Tensor bias, double scale,"
    " double clamp_min, double clamp_max);"
)

_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>

__device__ __forceinline__ float chain1(float v, float b, float scale, float lo, float hi) {
    const float z = v + b;
    const float y = z / (1.0f + __expf(-z)) * scale;
    return fminf(fmaxf(y, lo), hi);
}

// Grid: x over columns (one float4 column per thread, its bias kept in registers), y strides over rows.
// dim % 4 == 0, so the four elements of a float4 share one row.
__global__ void chain_vec4_kernel(const float4* __restrict__ x4, const float4* __restrict__ bias4,
                                  float4* __restrict__ out4, int64_t rows, int64_t dim4,
                                  float scale, float lo, float hi) {
    const int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (col >= dim4) return;
    const float4 b = bias4[col];
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
        const float4 v = x4[r * dim4 + col];
        out4[r * dim4 + col] = make_float4(chain1(v.x, b.x, scale, lo, hi), chain1(v.y, b.y, scale, lo, hi),
                                           chain1(v.z, b.z, scale, lo, hi), chain1(v.w, b.w, scale, lo, hi));
    }
}

__global__ void chain_scalar_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                    float* __restrict__ out, int64_t rows, int64_t dim,
                                    float scale, float lo, float hi) {
    const int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (col >= dim) return;
    const float b = bias[col];
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y)
        out[r * dim + col] = chain1(x[r * dim + col], b, scale, lo, hi);
}

// Enough blocks to fill the device (32 per SM), at most 65535 in y.
static dim3 grid_for(int64_t columns, int64_t rows, int threads) {
    const int64_t blocks_x = (columns + threads - 1) / threads;
    const int64_t target = static_cast<int64_t>(at::cuda::getCurrentDeviceProperties()->multiProcessorCount) * 32;
    int64_t blocks_y = (target + blocks_x - 1) / blocks_x;
    blocks_y = std::max<int64_t>(1, std::min<int64_t>({blocks_y, rows, 65535}));
    return dim3(static_cast<unsigned>(blocks_x), static_cast<unsigned>(blocks_y));
}

torch::Tensor bias_silu_scale_clamp_forward(torch::Tensor x, torch::Tensor bias, double scale,
                                            double clamp_min, double clamp_max) {
    TORCH_CHECK(x.is_cuda() && bias.is_cuda(), "expected CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && bias.scalar_type() == torch::kFloat32, "expected float32");
    const int64_t dim = x.size(-1);
    TORCH_CHECK(bias.numel() == dim, "bias must have ", dim, " elements");
    const c10::cuda::CUDAGuard device_guard(x.device());
    torch::Tensor input = x.contiguous();
    torch::Tensor b = bias.contiguous();
    torch::Tensor out = torch::empty_like(input);
    const int64_t n = input.numel();
    if (n == 0 || dim == 0) return out;
    const float* in_ptr = input.data_ptr<float>();
    const float* b_ptr = b.data_ptr<float>();
    float* out_ptr = out.data_ptr<float>();
    const int64_t rows = n / dim;
    const int threads = 256;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const float s = static_cast<float>(scale), lo = static_cast<float>(clamp_min), hi = static_cast<float>(clamp_max);
    auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
    if (dim % 4 == 0 && aligned(in_ptr) && aligned(b_ptr) && aligned(out_ptr)) {
        const dim3 grid = grid_for(dim / 4, rows, threads);
        chain_vec4_kernel<<<grid, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(in_ptr), reinterpret_cast<const float4*>(b_ptr),
            reinterpret_cast<float4*>(out_ptr), rows, dim / 4, s, lo, hi);
    } else {
        const dim3 grid = grid_for(dim, rows, threads);
        chain_scalar_kernel<<<grid, threads, 0, stream>>>(in_ptr, b_ptr, out_ptr, rows, dim, s, lo, hi);
    }
    const cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "bias_silu_scale_clamp kernel launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

_extension = load_inline(
    name="kforge_example_bias_silu_scale_clamp_cuda",
    cpp_sources=_CPP_SOURCE,
    cuda_sources=_CUDA_SOURCE,
    functions=["bias_silu_scale_clamp_forward"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(torch.nn.Module):
    """Same constructor as the problem's Model (and the same random bias, drawn the same way)."""

    def __init__(self, dim: int, scale: float, clamp_min: float, clamp_max: float):
        super().__init__()
        self.scale = scale
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max
        self.bias = torch.nn.Parameter(0.5 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _extension.bias_silu_scale_clamp_forward(x, self.bias, self.scale, self.clamp_min, self.clamp_max)
