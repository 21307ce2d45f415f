"""RMSNorm as one CUDA kernel: one 256-thread block per row; the mean square is reduced with warp
shuffles and a 32-entry shared array, then the row is scaled by rsqrt(mean square + eps) and the
weight and written. The second read of the row is served from L2 (a 16 KiB row per block).
float4 accesses when the row length is a multiple of 4 and the pointers are 16-byte aligned.

float32 only; launches on PyTorch's current stream and checks the launch.
"""
import torch
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = "torch::Tensor rms_norm_forward(torch::Tensor x, torch::Tensor weight, double eps);"

_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>
#include <cstdint>

constexpr int kThreads = 256;

// Sum of v over the block; every thread gets the total. blockDim.x must be a multiple of 32.
__device__ float block_sum(float v) {
    __shared__ float partial[32];
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        const int warps = blockDim.x >> 5;
        float w = lane < warps ? partial[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) w += __shfl_xor_sync(0xffffffffu, w, offset);
        if (lane == 0) partial[0] = w;
    }
    __syncthreads();
    const float total = partial[0];
    __syncthreads();  // partial[] may be reused by the next call
    return total;
}

template <bool kVec4>
__global__ void rms_norm_kernel(const float* __restrict__ x, const float* __restrict__ weight,
                                float* __restrict__ out, int64_t n, float eps) {
    const int64_t base = static_cast<int64_t>(blockIdx.x) * n;
    const float* row = x + base;
    float* dst = out + base;
    float squares = 0.0f;
    if (kVec4) {
        const float4* row4 = reinterpret_cast<const float4*>(row);
        for (int64_t i = threadIdx.x; i < n / 4; i += blockDim.x) {
            const float4 v = row4[i];
            squares += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
        }
    } else {
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) squares += row[i] * row[i];
    }
    const float inv_rms = rsqrtf(block_sum(squares) / static_cast<float>(n) + eps);
    if (kVec4) {
        const float4* row4 = reinterpret_cast<const float4*>(row);
        const float4* w4 = reinterpret_cast<const float4*>(weight);
        float4* dst4 = reinterpret_cast<float4*>(dst);
        for (int64_t i = threadIdx.x; i < n / 4; i += blockDim.x) {
            const float4 v = row4[i];
            const float4 w = w4[i];
            dst4[i] = make_float4(v.x * inv_rms * w.x, v.y * inv_rms * w.y, v.z * inv_rms * w.z, v.w * inv_rms * w.w);
        }
    } else {
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) dst[i] = row[i] * inv_rms * weight[i];
    }
}

torch::Tensor rms_norm_forward(torch::Tensor x, torch::Tensor weight, double eps) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "rms_norm_forward: expected CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32,
                "rms_norm_forward: expected float32");
    const int64_t n = x.size(-1);
    TORCH_CHECK(weight.numel() == n, "rms_norm_forward: weight must have ", n, " elements");
    const c10::cuda::CUDAGuard device_guard(x.device());
    torch::Tensor input = x.contiguous();
    torch::Tensor w = weight.contiguous();
    torch::Tensor out = torch::empty_like(input);
    if (input.numel() == 0) return out;
    const int64_t rows = input.numel() / n;
    TORCH_CHECK(rows <= 0x7fffffff, "rms_norm_forward: too many rows for a 1-D grid");
    const float* in_ptr = input.data_ptr<float>();
    const float* w_ptr = w.data_ptr<float>();
    float* out_ptr = out.data_ptr<float>();
    const bool vec4 = n % 4 == 0 && reinterpret_cast<uintptr_t>(in_ptr) % 16 == 0 &&
                      reinterpret_cast<uintptr_t>(w_ptr) % 16 == 0 && reinterpret_cast<uintptr_t>(out_ptr) % 16 == 0;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const dim3 grid(static_cast<unsigned>(rows));
    if (vec4) {
        rms_norm_kernel<true><<<grid, kThreads, 0, stream>>>(in_ptr, w_ptr, out_ptr, n, static_cast<float>(eps));
    } else {
        rms_norm_kernel<false><<<grid, kThreads, 0, stream>>>(in_ptr, w_ptr, out_ptr, n, static_cast<float>(eps));
    }
    const cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "rms_norm kernel launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

_extension = load_inline(
    name="kforge_example_rms_norm_cuda",
    cpp_sources=_CPP_SOURCE,
    cuda_sources=_CUDA_SOURCE,
    functions=["rms_norm_forward"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(torch.nn.Module):
    """Same constructor as the problem's Model (and the same random weight, drawn the same way)."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(1.0 + 0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _extension.rms_norm_forward(x, self.weight, self.eps)
