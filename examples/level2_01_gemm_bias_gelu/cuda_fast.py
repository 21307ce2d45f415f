"""GEMM with a fused bias + exact-GELU epilogue on tensor cores (TF32 in, FP32 accumulate).

y = gelu(x @ W^T + b). Block tile 128 x 128 x 32, 8 warps (2 x 4), each warp a 64 x 32 tile of
4 x 2 WMMA m16n16k8 TF32 fragments. Tiles of x and W are read with float4 loads (W row-major is
W^T column-major, which is what the B fragment wants), rounded to TF32 once when stored to shared
memory, and the next tile is prefetched into registers while the current one is multiplied. The
epilogue stages each 16 x 16 accumulator through shared memory, adds the bias, applies GELU and
stores: the product is never written out and reread.

Precision: TF32 rounds the inputs to a 10-bit mantissa (about 5e-4 relative); with K = 4096 the
error is around 1e-3 absolute on outputs of order 1 — inside the kernelbench tolerance (1e-2),
outside strict fp32 (1e-4). Eager PyTorch runs this GEMM in full FP32 unless TF32 is enabled.
Needs compute capability 8.0 or newer; float32 tensors; launches on the current stream.
"""
import torch
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = "torch::Tensor gemm_bias_gelu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>
#include <mma.h>
#include <cstdint>

namespace {

constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32;
constexpr int kPad = 4, kLds = kBlockK + kPad;           // shared row stride, floats (multiple of 4)
constexpr int kWarpsM = 2, kWarpsN = 4, kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kWarpM = kBlockM / kWarpsM, kWarpN = kBlockN / kWarpsN;  // 64 x 32 per warp
constexpr int kFragM = kWarpM / 16, kFragN = kWarpN / 16;              // 4 x 2 fragments
constexpr int kLoads = kBlockM * kBlockK / 4 / kThreads;              // float4 per thread per tile: 4

__device__ __forceinline__ float gelu_exact(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }

// Row `row` (of `rows`), columns [k, k + 4) of a row-major matrix with `cols` columns; zeros outside.
__device__ __forceinline__ float4 load4_guarded(const float* __restrict__ m, int64_t row, int64_t rows,
                                                int64_t k, int64_t cols, bool vec_ok) {
    if (row < rows && vec_ok && k + 3 < cols) return *reinterpret_cast<const float4*>(m + row * cols + k);
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (row < rows) {
        const float* p = m + row * cols;
        if (k + 0 < cols) v.x = p[k + 0];
        if (k + 1 < cols) v.y = p[k + 1];
        if (k + 2 < cols) v.z = p[k + 2];
        if (k + 3 < cols) v.w = p[k + 3];
    }
    return v;
}

__device__ __forceinline__ float4 to_tf32(float4 v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    v.x = nvcuda::wmma::__float_to_tf32(v.x);
    v.y = nvcuda::wmma::__float_to_tf32(v.y);
    v.z = nvcuda::wmma::__float_to_tf32(v.z);
    v.w = nvcuda::wmma::__float_to_tf32(v.w);
#endif
    return v;
}

__global__ void __launch_bounds__(kThreads)
gemm_bias_gelu_tf32_kernel(const float* __restrict__ a, const float* __restrict__ w,
                           const float* __restrict__ bias, float* __restrict__ out,
                           int64_t M, int64_t N, int64_t K, bool vec_ok) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    using namespace nvcuda;
    __shared__ __align__(128) float a_tile[kBlockM * kLds];
    __shared__ __align__(128) float b_tile[kBlockN * kLds];
    __shared__ __align__(128) float stage[kWarpsM * kWarpsN][16 * 16];

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
    const int64_t block_m = static_cast<int64_t>(blockIdx.y) * kBlockM;
    const int64_t block_n = static_cast<int64_t>(blockIdx.x) * kBlockN;

    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[kFragM][kFragN];
    for (int i = 0; i < kFragM; ++i)
        for (int j = 0; j < kFragN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    float4 a_next[kLoads], b_next[kLoads];
    auto fetch = [&](int64_t k0) {
        for (int l = 0; l < kLoads; ++l) {
            const int idx = threadIdx.x + l * kThreads;   // 0 .. 1023
            const int row = idx / (kBlockK / 4), c4 = idx % (kBlockK / 4);
            a_next[l] = load4_guarded(a, block_m + row, M, k0 + 4 * c4, K, vec_ok);
            b_next[l] = load4_guarded(w, block_n + row, N, k0 + 4 * c4, K, vec_ok);
        }
    };
    auto publish = [&]() {
        for (int l = 0; l < kLoads; ++l) {
            const int idx = threadIdx.x + l * kThreads;
            const int row = idx / (kBlockK / 4), c4 = idx % (kBlockK / 4);
            *reinterpret_cast<float4*>(a_tile + row * kLds + 4 * c4) = to_tf32(a_next[l]);
            *reinterpret_cast<float4*>(b_tile + row * kLds + 4 * c4) = to_tf32(b_next[l]);
        }
    };

    const int64_t k_tiles = (K + kBlockK - 1) / kBlockK;
    fetch(0);
    publish();
    __syncthreads();
    for (int64_t t = 0; t < k_tiles; ++t) {
        if (t + 1 < k_tiles) fetch((t + 1) * kBlockK);
        for (int kk = 0; kk < kBlockK; kk += 8) {
            wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa[kFragM];
            wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb[kFragN];
            for (int i = 0; i < kFragM; ++i)
                wmma::load_matrix_sync(fa[i], a_tile + (warp_m * kWarpM + i * 16) * kLds + kk, kLds);
            for (int j = 0; j < kFragN; ++j)
                wmma::load_matrix_sync(fb[j], b_tile + (warp_n * kWarpN + j * 16) * kLds + kk, kLds);
            for (int i = 0; i < kFragM; ++i)
                for (int j = 0; j < kFragN; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
        __syncthreads();
        if (t + 1 < k_tiles) {
            publish();
            __syncthreads();
        }
    }

    float* my_stage = stage[warp];
    for (int i = 0; i < kFragM; ++i) {
        for (int j = 0; j < kFragN; ++j) {
            wmma::store_matrix_sync(my_stage, acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            const int64_t row0 = block_m + warp_m * kWarpM + i * 16;
            const int64_t col0 = block_n + warp_n * kWarpN + j * 16;
            for (int e = lane; e < 256; e += 32) {
                const int64_t row = row0 + e / 16, col = col0 + e % 16;
                if (row < M && col < N) out[row * N + col] = gelu_exact(my_stage[e] + bias[col]);
            }
            __syncwarp();
        }
    }
#endif
}

}  // namespace

torch::Tensor gemm_bias_gelu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "expected CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                bias.scalar_type() == torch::kFloat32, "expected float32");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1), "shape mismatch: x ", x.sizes(),
                ", weight ", weight.sizes());
    TORCH_CHECK(bias.numel() == weight.size(0), "bias must have out_features elements");
    const c10::cuda::CUDAGuard device_guard(x.device());
    TORCH_CHECK(at::cuda::getCurrentDeviceProperties()->major >= 8, "TF32 tensor cores need compute capability 8.0+");
    torch::Tensor a = x.contiguous();
    torch::Tensor w = weight.contiguous();
    torch::Tensor b = bias.contiguous();
    const int64_t M = a.size(0), K = a.size(1), N = w.size(0);
    torch::Tensor out = torch::empty({M, N}, a.options());
    if (M == 0 || N == 0) return out;
    TORCH_CHECK(K > 0, "in_features must be positive");
    const bool vec_ok = K % 4 == 0 && reinterpret_cast<uintptr_t>(a.data_ptr<float>()) % 16 == 0 &&
                        reinterpret_cast<uintptr_t>(w.data_ptr<float>()) % 16 == 0;
    const dim3 grid(static_cast<unsigned>((N + kBlockN - 1) / kBlockN), static_cast<unsigned>((M + kBlockM - 1) / kBlockM));
    TORCH_CHECK(grid.y <= 65535, "too many rows for the grid");
    gemm_bias_gelu_tf32_kernel<<<grid, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), M, N, K, vec_ok);
    const cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "gemm_bias_gelu kernel launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

_extension = load_inline(
    name="kforge_example_gemm_bias_gelu_cuda",
    cpp_sources=_CPP_SOURCE,
    cuda_sources=_CUDA_SOURCE,
    functions=["gemm_bias_gelu_forward"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(torch.nn.Module):
    """Same constructor as the problem's Model; holds an nn.Linear so the weights match it exactly."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = torch.nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _extension.gemm_bias_gelu_forward(x, self.linear.weight, self.linear.bias)
