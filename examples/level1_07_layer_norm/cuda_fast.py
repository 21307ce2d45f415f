"""Layer normalisation over the last dimension with affine weight and bias, in CUDA.

One 256-thread block per row; rows of up to 8192 floats (the gpu preset's 4096) are held in
registers as float4, so x is read once and y written once. Statistics are two-pass over the
registers (mean, then the biased variance of x - mean, matching F.layer_norm), each a warp-shuffle
+ shared-memory block sum; then y = (x - mean) * rsqrt(var + eps) * weight + bias. Other row
lengths use a three-pass scalar kernel. Parameters are created exactly as the reference creates
them (same order, same RNG draws). float32.
"""
import torch
from torch.utils.cpp_extension import load_inline

_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <climits>
#include <cmath>

#define KF_CHECK_LAUNCH()                                                                   \
    do {                                                                                    \
        const cudaError_t kf_err = cudaGetLastError();                                      \
        TORCH_CHECK(kf_err == cudaSuccess, "kernel launch failed: ", cudaGetErrorString(kf_err)); \
    } while (0)

static inline bool kf_aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

static inline void kf_check_float_cuda(const torch::Tensor& t, const char* name) {
    TORCH_CHECK(t.is_cuda(), name, " must be a CUDA tensor");
    TORCH_CHECK(t.scalar_type() == torch::kFloat32, name, " must be float32");
}
__device__ __forceinline__ float kf_warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float kf_warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Block-wide sum / max for THREADS threads (a multiple of 32, at most 1024). `scratch` holds 33
// floats of shared memory; every thread gets the result; safe to call repeatedly with one scratch.
template <int THREADS>
__device__ __forceinline__ float kf_block_sum(float v, float* scratch) {
    constexpr int WARPS = THREADS / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = kf_warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float w = lane < WARPS ? scratch[lane] : 0.f;
        w = kf_warp_sum(w);
        if (lane == 0) scratch[32] = w;
    }
    __syncthreads();
    const float r = scratch[32];
    __syncthreads();
    return r;
}

template <int THREADS>
__device__ __forceinline__ float kf_block_max(float v, float* scratch) {
    constexpr int WARPS = THREADS / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = kf_warp_max(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float w = lane < WARPS ? scratch[lane] : -INFINITY;
        w = kf_warp_max(w);
        if (lane == 0) scratch[32] = w;
    }
    __syncthreads();
    const float r = scratch[32];
    __syncthreads();
    return r;
}
namespace {

constexpr int LN_THREADS = 256;

// One block per row; the row lives in registers (VPT float4 per thread), so x is read once.
// Two-pass statistics over the registers: mean, then the biased variance of (x - mean).
template <int VPT>
__global__ void __launch_bounds__(LN_THREADS) layer_norm_vec_kernel(const float* __restrict__ x,
                                                                    const float* __restrict__ w,
                                                                    const float* __restrict__ b,
                                                                    float* __restrict__ y, int n, float eps) {
    __shared__ float scratch[33];
    const int n4 = n >> 2;
    const size_t row = blockIdx.x;
    const float4* xr = reinterpret_cast<const float4*>(x + row * n);
    float4 v[VPT];
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
        const int idx = threadIdx.x + i * LN_THREADS;
        if (idx < n4) {
            v[i] = xr[idx];
            s += (v[i].x + v[i].y) + (v[i].z + v[i].w);
        } else {
            v[i] = make_float4(0.f, 0.f, 0.f, 0.f);
        }
    }
    const float mean = kf_block_sum<LN_THREADS>(s, scratch) / (float)n;
    float ss = 0.f;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
        const int idx = threadIdx.x + i * LN_THREADS;
        if (idx < n4) {
            const float dx = v[i].x - mean, dy = v[i].y - mean, dz = v[i].z - mean, dw = v[i].w - mean;
            ss += (dx * dx + dy * dy) + (dz * dz + dw * dw);
        }
    }
    const float var = kf_block_sum<LN_THREADS>(ss, scratch) / (float)n;
    const float rstd = rsqrtf(var + eps);
    const float4* w4 = reinterpret_cast<const float4*>(w);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float4* yr = reinterpret_cast<float4*>(y + row * n);
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
        const int idx = threadIdx.x + i * LN_THREADS;
        if (idx < n4) {
            const float4 wv = __ldg(w4 + idx), bv = __ldg(b4 + idx);
            float4 o;
            o.x = (v[i].x - mean) * rstd * wv.x + bv.x;
            o.y = (v[i].y - mean) * rstd * wv.y + bv.y;
            o.z = (v[i].z - mean) * rstd * wv.z + bv.z;
            o.w = (v[i].w - mean) * rstd * wv.w + bv.w;
            yr[idx] = o;
        }
    }
}

// Any row length / alignment: three passes over the row from global memory (L1/L2 serve 2 and 3).
__global__ void __launch_bounds__(LN_THREADS) layer_norm_generic_kernel(const float* __restrict__ x,
                                                                        const float* __restrict__ w,
                                                                        const float* __restrict__ b,
                                                                        float* __restrict__ y, int n, float eps) {
    __shared__ float scratch[33];
    const size_t row = blockIdx.x;
    const float* xr = x + row * n;
    float s = 0.f;
    for (int i = threadIdx.x; i < n; i += LN_THREADS) s += xr[i];
    const float mean = kf_block_sum<LN_THREADS>(s, scratch) / (float)n;
    float ss = 0.f;
    for (int i = threadIdx.x; i < n; i += LN_THREADS) {
        const float d = xr[i] - mean;
        ss += d * d;
    }
    const float var = kf_block_sum<LN_THREADS>(ss, scratch) / (float)n;
    const float rstd = rsqrtf(var + eps);
    float* yr = y + row * n;
    for (int i = threadIdx.x; i < n; i += LN_THREADS) yr[i] = (xr[i] - mean) * rstd * w[i] + b[i];
}

void launch_layer_norm(const float* x, const float* w, const float* b, float* y, long long rows, int n, float eps,
                       cudaStream_t stream) {
    if (rows == 0 || n == 0) return;
    TORCH_CHECK(rows < INT_MAX, "too many rows");
    const unsigned grid = (unsigned)rows;
    const int n4 = n / 4;
    const int need = (n4 + LN_THREADS - 1) / LN_THREADS;
    const bool vec = (n % 4 == 0) && kf_aligned16(x) && kf_aligned16(y) && kf_aligned16(w) && kf_aligned16(b);
    if (vec && need <= 1) layer_norm_vec_kernel<1><<<grid, LN_THREADS, 0, stream>>>(x, w, b, y, n, eps);
    else if (vec && need <= 2) layer_norm_vec_kernel<2><<<grid, LN_THREADS, 0, stream>>>(x, w, b, y, n, eps);
    else if (vec && need <= 4) layer_norm_vec_kernel<4><<<grid, LN_THREADS, 0, stream>>>(x, w, b, y, n, eps);
    else if (vec && need <= 8) layer_norm_vec_kernel<8><<<grid, LN_THREADS, 0, stream>>>(x, w, b, y, n, eps);
    else layer_norm_generic_kernel<<<grid, LN_THREADS, 0, stream>>>(x, w, b, y, n, eps);
    KF_CHECK_LAUNCH();
}

}  // namespace
torch::Tensor layer_norm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    kf_check_float_cuda(x, "x");
    kf_check_float_cuda(weight, "weight");
    kf_check_float_cuda(bias, "bias");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    const int64_t n = x.size(-1);
    TORCH_CHECK(n < INT_MAX, "rows too long");
    TORCH_CHECK(weight.numel() == n && bias.numel() == n, "weight and bias must have x.size(-1) elements");
    const c10::cuda::OptionalCUDAGuard guard(x.device());
    torch::Tensor X = x.contiguous(), W = weight.contiguous(), B = bias.contiguous();
    torch::Tensor y = torch::empty(X.sizes(), X.options());
    const long long rows = n == 0 ? 0 : X.numel() / n;
    launch_layer_norm(X.data_ptr<float>(), W.data_ptr<float>(), B.data_ptr<float>(), y.data_ptr<float>(), rows,
                      (int)n, (float)eps, at::cuda::getCurrentCUDAStream());
    return y;
}
"""

_CPP_SOURCE = r"""
torch::Tensor layer_norm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);
"""

_extension = load_inline(
    name="kforge_example_level1_07_layer_norm_cuda",
    cpp_sources=_CPP_SOURCE,
    cuda_sources=_CUDA_SOURCE,
    functions=["layer_norm_forward"],
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(torch.nn.Module):
    """Same constructor as the problem's Model; parameters drawn in the same order."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(1.0 + 0.1 * torch.randn(hidden))
        self.bias = torch.nn.Parameter(0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _extension.layer_norm_forward(x, self.weight, self.bias, self.eps)
