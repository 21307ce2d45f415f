"""Residual add + LayerNorm as one CUDA kernel: one 256-thread block per row. The sum x + residual
is read from global memory once and kept in shared memory; the mean and the (biased) variance are
reduced from there in two passes (no cancellation), then the row is normalised, scaled, shifted and
written. Global traffic is the minimum: two reads and one write per element.
float4 global accesses when the row length is a multiple of 4 and the pointers are 16-byte aligned.

float32 only; rows up to the device's shared-memory limit per block (about 56K floats on an H200);
launches on PyTorch's current stream and checks the launch.
"""
import torch
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = (
    "torch::Tensor add_layer_norm_forward(torch::Tensor x, torch::Tensor residual, torch::Tensor weight,"
    " torch::Tensor bias, double eps);"
)

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
__global__ void add_layer_norm_kernel(const float* __restrict__ x, const float* __restrict__ residual,
                                      const float* __restrict__ weight, const float* __restrict__ bias,
                                      float* __restrict__ out, int n, float eps) {
    extern __shared__ float4 row_storage[];  // float4 for alignment; holds n floats
    float* row = reinterpret_cast<float*>(row_storage);
    const int64_t base = static_cast<int64_t>(blockIdx.x) * n;
    float sum = 0.0f;
    if (kVec4) {
        const float4* x4 = reinterpret_cast<const float4*>(x + base);
        const float4* r4 = reinterpret_cast<const float4*>(residual + base);
        for (int i = threadIdx.x; i < n / 4; i += blockDim.x) {
            const float4 a = x4[i];
            const float4 b = r4[i];
            const float4 s = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
            row_storage[i] = s;
            sum += (s.x + s.y) + (s.z + s.w);
        }
    } else {
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            const float s = x[base + i] + residual[base + i];
            row[i] = s;
            sum += s;
        }
    }
    const float mean = block_sum(sum) / static_cast<float>(n);  // block_sum's barrier publishes row[]
    float squares = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const float d = row[i] - mean;
        squares += d * d;
    }
    const float rstd = rsqrtf(block_sum(squares) / static_cast<float>(n) + eps);
    if (kVec4) {
        const float4* w4 = reinterpret_cast<const float4*>(weight);
        const float4* b4 = reinterpret_cast<const float4*>(bias);
        float4* o4 = reinterpret_cast<float4*>(out + base);
        for (int i = threadIdx.x; i < n / 4; i += blockDim.x) {
            const float4 s = row_storage[i];
            const float4 w = w4[i];
            const float4 b = b4[i];
            o4[i] = make_float4((s.x - mean) * rstd * w.x + b.x, (s.y - mean) * rstd * w.y + b.y,
                                (s.z - mean) * rstd * w.z + b.z, (s.w - mean) * rstd * w.w + b.w);
        }
    } else {
        for (int i = threadIdx.x; i < n; i += blockDim.x)
            out[base + i] = (row[i] - mean) * rstd * weight[i] + bias[i];
    }
}

template <bool kVec4>
static void launch(const float* x, const float* r, const float* w, const float* b, float* o, int64_t rows,
                   int n, float eps, size_t shared_bytes, cudaStream_t stream) {
    if (shared_bytes > 48 * 1024) {
        const cudaError_t attr = cudaFuncSetAttribute(add_layer_norm_kernel<kVec4>,
                                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                      static_cast<int>(shared_bytes));
        TORCH_CHECK(attr == cudaSuccess, "add_layer_norm: cannot reserve ", shared_bytes, " bytes of shared memory: ",
                    cudaGetErrorString(attr));
    }
    add_layer_norm_kernel<kVec4><<<static_cast<unsigned>(rows), kThreads, shared_bytes, stream>>>(x, r, w, b, o, n, eps);
}

torch::Tensor add_layer_norm_forward(torch::Tensor x, torch::Tensor residual, torch::Tensor weight,
                                     torch::Tensor bias, double eps) {
    TORCH_CHECK(x.is_cuda() && residual.is_cuda() && weight.is_cuda() && bias.is_cuda(), "expected CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && residual.scalar_type() == torch::kFloat32 &&
                weight.scalar_type() == torch::kFloat32 && bias.scalar_type() == torch::kFloat32,
                "expected float32");
    TORCH_CHECK(x.sizes() == residual.sizes(), "x and residual must have the same shape");
    const int64_t n = x.size(-1);
    TORCH_CHECK(weight.numel() == n && bias.numel() == n, "weight and bias must have ", n, " elements");
    const c10::cuda::CUDAGuard device_guard(x.device());
    torch::Tensor a = x.contiguous();
    torch::Tensor r = residual.contiguous();
    torch::Tensor w = weight.contiguous();
    torch::Tensor b = bias.contiguous();
    torch::Tensor out = torch::empty_like(a);
    if (a.numel() == 0) return out;
    const int64_t rows = a.numel() / n;
    TORCH_CHECK(rows <= 0x7fffffff, "add_layer_norm: too many rows for a 1-D grid");
    const size_t shared_bytes = static_cast<size_t>((n + 3) / 4) * sizeof(float4);
    const size_t shared_limit = at::cuda::getCurrentDeviceProperties()->sharedMemPerBlockOptin;
    TORCH_CHECK(shared_bytes + 32 * sizeof(float) <= shared_limit, "add_layer_norm: a row of ", n,
                " floats does not fit in shared memory (", shared_limit, " bytes per block)");
    const float* pa = a.data_ptr<float>();
    const float* pr = r.data_ptr<float>();
    const float* pw = w.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* po = out.data_ptr<float>();
    auto aligned = [](const float* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
    const bool vec4 = n % 4 == 0 && aligned(pa) && aligned(pr) && aligned(pw) && aligned(pb) && aligned(po);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (vec4) {
        launch<true>(pa, pr, pw, pb, po, rows, static_cast<int>(n), static_cast<float>(eps), shared_bytes, stream);
    } else {
        launch<false>(pa, pr, pw, pb, po, rows, static_cast<int>(n), static_cast<float>(eps), shared_bytes, stream);
    }
    const cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "add_layer_norm kernel launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

_extension = load_inline(
    name="kforge_example_add_layer_norm_cuda",
    cpp_sources=_CPP_SOURCE,
    cuda_sources=_CUDA_SOURCE,
    functions=["add_layer_norm_forward"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(torch.nn.Module):
    """Same constructor as the problem's Model (same random affine parameters, drawn the same way)."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(1.0 + 0.1 * torch.randn(hidden))
        self.bias = torch.nn.Parameter(0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return _extension.add_layer_norm_forward(x, residual, self.weight, self.bias, self.eps)
