"""Conv2d (stride 1, padding k // 2, bias) as an implicit GEMM on the tensor cores, 3xTF32.

Per image, out (Co x H*W) = weight (Co x Ci*k*k, already row-major) @ im2col(x) (Ci*k*k x H*W);
the im2col matrix is never built: each 128-column tile gathers its input elements straight
into shared memory with 4-byte cp.async (zero-filled at the borders), using a per-block table of
(channel, dh, dw) offsets for the reduction index. The product runs through the same 3xTF32
mma.sync pipeline as the matmul example (fp32-accurate: max error vs float64 1.6e-6 at the gpu
preset, where eager's TF32 cuDNN conv has 1.0e-3; 128x128x32 tiles, 3 stages), and the
epilogue adds the bias on the way out. The weight and bias are the nn.Conv2d's own, created
exactly as the reference creates them.
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
// ---------------------------------------------------------------------------------------------
// 3xTF32 tensor-core GEMM core (fp32-accurate): every fp32 operand x is split into
// big = tf32(x) and small = tf32(x - big); a*b is accumulated as a_s*b_b + a_b*b_s + a_b*b_b in
// fp32 by mma.sync.m16n8k8 (the a_s*b_s term, ~2^-22 relative, is dropped).
// Block tile 128 x 128 x 32, 256 threads = 8 warps as 2 (M) x 4 (N), warp tile 64 x 32,
// 3-stage cp.async pipeline. A is always stored m-major in shared memory (As[m][k], stride 36);
// B is stored k-major (Bs[k][n], stride 136) or n-major (Bs[n][k], stride 36). The strides make
// every fragment read bank-conflict-free.
// ---------------------------------------------------------------------------------------------
namespace gemm {

constexpr int BM = 128;
constexpr int BN = 128;
constexpr int BK = 32;
constexpr int STAGES = 3;
constexpr int THREADS = 256;
constexpr int A_LD = BK + 4;    // 36
constexpr int BK_LD = BN + 8;   // 136, k-major B
constexpr int BN_LD = BK + 4;   // 36, n-major B
constexpr int A_TILE = BM * A_LD;

template <bool KMAJOR>
__host__ __device__ constexpr int stage_floats() { return A_TILE + (KMAJOR ? BK * BK_LD : BN * BN_LD); }

template <bool KMAJOR>
__host__ __device__ constexpr size_t pipeline_bytes() { return sizeof(float) * STAGES * stage_floats<KMAJOR>(); }

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte / 4-byte asynchronous copies; when `pred` is false nothing is read and zeros are written.
__device__ __forceinline__ void cp_async16(float* dst, const float* src, bool pred) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
                 "r"(pred ? 16 : 0) : "memory");
}
__device__ __forceinline__ void cp_async4(float* dst, const float* src, bool pred) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
                 "r"(pred ? 4 : 0) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ void split_tf32(float x, uint32_t& big, uint32_t& small) {
    uint32_t b, s;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(b) : "f"(x));
    const float rest = x - __uint_as_float(b);
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(s) : "f"(rest));
    big = b;
    small = s;
}

__device__ __forceinline__ void mma_tf32(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// One BK-deep stage: 4 k-steps of 8; per warp 4 (m16) x 4 (n8) tiles, 3 mma each.
// Fragment layouts (PTX m16n8k8 .tf32, g = lane / 4, t = lane % 4):
//   A: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4);  B: b0 (k=t, n=g), b1 (k=t+4, n=g);
//   C: c0 (g, 2t), c1 (g, 2t+1), c2 (g+8, 2t), c3 (g+8, 2t+1).
template <bool KMAJOR>
__device__ __forceinline__ void compute_stage(const float* As, const float* Bs, float (&acc)[4][4][4], int wm,
                                              int wn, int lane) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
        uint32_t bb[4][2], bs[4][2];
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
            const int n = wn * 32 + ni * 8 + g;
            float v0, v1;
            if (KMAJOR) {
                v0 = Bs[(kk + t) * BK_LD + n];
                v1 = Bs[(kk + t + 4) * BK_LD + n];
            } else {
                v0 = Bs[n * BN_LD + kk + t];
                v1 = Bs[n * BN_LD + kk + t + 4];
            }
            split_tf32(v0, bb[ni][0], bs[ni][0]);
            split_tf32(v1, bb[ni][1], bs[ni][1]);
        }
#pragma unroll
        for (int mi = 0; mi < 4; ++mi) {
            const float* p = As + (wm * 64 + mi * 16 + g) * A_LD + kk + t;
            uint32_t ab[4], as[4];
            split_tf32(p[0], ab[0], as[0]);
            split_tf32(p[8 * A_LD], ab[1], as[1]);
            split_tf32(p[4], ab[2], as[2]);
            split_tf32(p[8 * A_LD + 4], ab[3], as[3]);
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) {
                mma_tf32(acc[mi][ni], as, bb[ni]);
                mma_tf32(acc[mi][ni], ab, bs[ni]);
                mma_tf32(acc[mi][ni], ab, bb[ni]);
            }
        }
    }
}

// The pipelined K loop. `load(As, Bs, k0)` issues the cp.async copies of the tile starting at k0
// (zero-filling anything outside the operands) into one stage.
template <bool KMAJOR, class Loader>
__device__ __forceinline__ void mainloop(float* smem, int K, const Loader& load, float (&acc)[4][4][4]) {
    constexpr int STAGE = stage_floats<KMAJOR>();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int wm = warp >> 2, wn = warp & 3;
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.f;
    const int ktiles = (K + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles) load(smem + s * STAGE, smem + s * STAGE + A_TILE, s * BK);
        cp_async_commit();
    }
    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<STAGES - 2>();   // tile kt has landed (for this thread) ...
        __syncthreads();               // ... for every thread; and stage (kt-1) % STAGES is free
        const int next = kt + STAGES - 1;
        if (next < ktiles) {
            float* st = smem + (next % STAGES) * STAGE;
            load(st, st + A_TILE, next * BK);
        }
        cp_async_commit();
        const float* As = smem + (kt % STAGES) * STAGE;
        // The tensor cores' fp32 accumulation truncates; summing each 32-deep slice into a fresh
        // tile and adding that to `acc` with IEEE adds keeps the truncation at the slice's (small)
        // magnitude, which brings the error down to fp32-GEMM level at large K.
        float part[4][4][4];
#pragma unroll
        for (int mi = 0; mi < 4; ++mi)
#pragma unroll
            for (int ni = 0; ni < 4; ++ni)
#pragma unroll
                for (int e = 0; e < 4; ++e) part[mi][ni][e] = 0.f;
        compute_stage<KMAJOR>(As, As + A_TILE, part, wm, wn, lane);
#pragma unroll
        for (int mi = 0; mi < 4; ++mi)
#pragma unroll
            for (int ni = 0; ni < 4; ++ni)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[mi][ni][e] += part[mi][ni][e];
    }
    cp_async_wait<0>();
}

// Calls epi(row, col, v0, v1) for each accumulator pair: tile-local row, tile-local even column.
template <class Epi>
__device__ __forceinline__ void for_each_pair(const float (&acc)[4][4][4], const Epi& epi) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int wm = warp >> 2, wn = warp & 3, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                epi(wm * 64 + mi * 16 + g + h * 8, wn * 32 + ni * 8 + t * 2, acc[mi][ni][2 * h],
                    acc[mi][ni][2 * h + 1]);
}

// Rows [r0, r0 + 128) x columns [k0, k0 + 32) of a row-major rows x K matrix (leading dim ld)
// into a [128][36] shared tile. VEC: 16-byte copies (needs K % 4 == 0, ld % 4 == 0, 16-byte base).
template <bool VEC>
__device__ __forceinline__ void load_rows(float* dst, const float* src, int rows, int K, int ld, int r0, int k0) {
    const int tid = threadIdx.x;
    if (VEC) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int idx = tid + i * THREADS;
            const int r = idx >> 3, c = (idx & 7) << 2;
            const int gr = r0 + r, gk = k0 + c;
            const bool ok = gr < rows && gk < K;
            cp_async16(dst + r * A_LD + c, ok ? src + (size_t)gr * ld + gk : src, ok);
        }
    } else {
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const int idx = tid + i * THREADS;
            const int r = idx >> 5, c = idx & 31;
            const int gr = r0 + r, gk = k0 + c;
            const bool ok = gr < rows && gk < K;
            cp_async4(dst + r * A_LD + c, ok ? src + (size_t)gr * ld + gk : src, ok);
        }
    }
}

// Rows [k0, k0 + 32) x columns [n0, n0 + 128) of a row-major K x N matrix into a [32][136] tile.
// VEC: 16-byte copies (needs N % 4 == 0, ld % 4 == 0, 16-byte base).
template <bool VEC>
__device__ __forceinline__ void load_kmajor(float* dst, const float* src, int K, int N, int ld, int k0, int n0) {
    const int tid = threadIdx.x;
    if (VEC) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int idx = tid + i * THREADS;
            const int r = idx >> 5, c = (idx & 31) << 2;
            const int gk = k0 + r, gn = n0 + c;
            const bool ok = gk < K && gn < N;
            cp_async16(dst + r * BK_LD + c, ok ? src + (size_t)gk * ld + gn : src, ok);
        }
    } else {
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const int idx = tid + i * THREADS;
            const int r = idx >> 7, c = idx & 127;
            const int gk = k0 + r, gn = n0 + c;
            const bool ok = gk < K && gn < N;
            cp_async4(dst + r * BK_LD + c, ok ? src + (size_t)gk * ld + gn : src, ok);
        }
    }
}

// Block -> (m0, n0) for a 1-D grid of tiles_m * tiles_n blocks, grouped 8 M-tiles at a time so
// that the blocks running together share A rows and B columns in L2.
__device__ __forceinline__ void grouped_tile(int M, int N, int& m0, int& n0) {
    constexpr int GROUP = 8;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int bid = blockIdx.x;
    const int per_group = GROUP * tiles_n;
    const int group = bid / per_group;
    const int first_m = group * GROUP;
    const int group_m = min(tiles_m - first_m, GROUP);
    const int in_group = bid - group * per_group;
    m0 = (first_m + in_group % group_m) * BM;
    n0 = (in_group / group_m) * BN;
}

}  // namespace gemm
namespace {

// One reduction index k = (ci, kh, kw) of the implicit GEMM: the input offset relative to the
// output position, and the row/column shifts for the zero-padding test.
struct Tap {
    int off;    // ci * H * W + dh * W + dw
    short dh;   // kh - pad (0x3fff for k >= K: always out of range)
    short dw;   // kw - pad
};

// Implicit-GEMM convolution, stride 1, dilation 1: C[co][p] = sum_k W[co][k] * X[k][p] for one
// image per blockIdx.z, M = Co (blockIdx.y), N = output positions (blockIdx.x). A = the weight,
// which is already a row-major Co x K matrix; B = the im2col view of the input, gathered
// element by element with zero fill at the borders (never materialised).
// POOL == false: column c of the tile is output position p = blockIdx.x * 128 + c; epilogue adds
// the bias. POOL == true: the tile covers conv rows (2 hp, 2 hp + 1) x conv columns
// [64 wb, 64 wb + 64), arranged so that each thread's accumulators hold whole 2x2 windows;
// epilogue = max over the window, + bias, ReLU (= MaxPool2d(2)(ReLU(conv + bias))).
template <bool VA, bool POOL>
__global__ void __launch_bounds__(gemm::THREADS) conv_kernel(const float* __restrict__ x,
                                                             const float* __restrict__ w,
                                                             const float* __restrict__ bias, float* __restrict__ y,
                                                             int Ci, int H, int W, int Co, int KS, int pad, int Hc,
                                                             int Wc, int Hp, int Wp, int wblocks) {
    extern __shared__ __align__(16) float smem[];
    const int K = Ci * KS * KS;
    const int kpad = ((K + gemm::BK - 1) / gemm::BK) * gemm::BK;
    Tap* taps = reinterpret_cast<Tap*>(smem + gemm::STAGES * gemm::stage_floats<true>());
    for (int k = threadIdx.x; k < kpad; k += gemm::THREADS) {
        Tap e;
        if (k < K) {
            const int ci = k / (KS * KS);
            const int rem = k - ci * KS * KS;
            const int kh = rem / KS, kw = rem - (rem / KS) * KS;
            e.dh = (short)(kh - pad);
            e.dw = (short)(kw - pad);
            e.off = ci * H * W + (kh - pad) * W + (kw - pad);
        } else {
            e.off = 0;
            e.dh = (short)0x3fff;
            e.dw = 0;
        }
        taps[k] = e;
    }

    const int img = blockIdx.z;
    const int m0 = blockIdx.y * gemm::BM;
    const int c = threadIdx.x & 127;   // this thread's B column
    const int r0 = threadIdx.x >> 7;   // its first B row; rows r0, r0 + 2, ..., r0 + 30
    int ho, wo;
    bool col_ok;
    if (POOL) {
        const int hp = blockIdx.x / wblocks, wb = blockIdx.x - (blockIdx.x / wblocks) * wblocks;
        ho = 2 * hp + ((c >> 3) & 1);
        wo = wb * 64 + (c & 7) + ((c >> 4) << 3);
        col_ok = wo < 2 * Wp;
    } else {
        const int p = blockIdx.x * gemm::BN + c;
        ho = p / Wc;
        wo = p - (p / Wc) * Wc;
        col_ok = p < Hc * Wc;
    }
    const float* xn = x + (size_t)img * Ci * H * W;
    const int base = ho * W + wo;
    __syncthreads();  // taps written

    auto load = [&](float* As, float* Bs, int k0) {
        gemm::load_rows<VA>(As, w, Co, K, K, m0, k0);
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            const int r = r0 + 2 * j;
            const Tap e = taps[k0 + r];
            const int hh = ho + e.dh, ww = wo + e.dw;
            const bool ok = col_ok && (unsigned)hh < (unsigned)H && (unsigned)ww < (unsigned)W;
            gemm::cp_async4(Bs + r * gemm::BK_LD + c, ok ? xn + (base + e.off) : xn, ok);
        }
    };
    float acc[4][4][4];
    gemm::mainloop<true>(smem, K, load, acc);

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int wm = warp >> 2, wn = warp & 3, g = lane >> 2, t = lane & 3;
    if (POOL) {
        const int hp = blockIdx.x / wblocks, wb = blockIdx.x - (blockIdx.x / wblocks) * wblocks;
#pragma unroll
        for (int mi = 0; mi < 4; ++mi)
#pragma unroll
            for (int q = 0; q < 2; ++q)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    // ni = 2q: conv row 2hp, ni = 2q + 1: conv row 2hp + 1; e = 2h, 2h + 1: the
                    // two neighbouring conv columns 2wp, 2wp + 1; h selects channel g or g + 8.
                    const int co = m0 + wm * 64 + mi * 16 + g + h * 8;
                    const int wp = wb * 32 + wn * 8 + q * 4 + t;
                    if (co < Co && wp < Wp) {
                        const float v = fmaxf(fmaxf(acc[mi][2 * q][2 * h], acc[mi][2 * q][2 * h + 1]),
                                              fmaxf(acc[mi][2 * q + 1][2 * h], acc[mi][2 * q + 1][2 * h + 1]));
                        y[(((size_t)img * Co + co) * Hp + hp) * Wp + wp] = fmaxf(v + bias[co], 0.f);
                    }
                }
    } else {
        const int P = Hc * Wc;
        const int p0 = blockIdx.x * gemm::BN;
        const bool vec = (P & 1) == 0;
#pragma unroll
        for (int mi = 0; mi < 4; ++mi)
#pragma unroll
            for (int ni = 0; ni < 4; ++ni)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int co = m0 + wm * 64 + mi * 16 + g + h * 8;
                    const int p = p0 + wn * 32 + ni * 8 + t * 2;
                    if (co >= Co) continue;
                    const float bv = bias[co];
                    const float v0 = acc[mi][ni][2 * h] + bv, v1 = acc[mi][ni][2 * h + 1] + bv;
                    float* dst = y + ((size_t)img * Co + co) * P + p;
                    if (vec) {
                        if (p < P) *reinterpret_cast<float2*>(dst) = make_float2(v0, v1);
                    } else {
                        if (p < P) dst[0] = v0;
                        if (p + 1 < P) dst[1] = v1;
                    }
                }
    }
}

struct ConvShape {
    int N, Ci, H, W, Co, KS, pad, Hc, Wc, K;
};

ConvShape check_conv(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b, int64_t pad) {
    kf_check_float_cuda(x, "x");
    kf_check_float_cuda(w, "weight");
    kf_check_float_cuda(b, "bias");
    TORCH_CHECK(x.dim() == 4 && w.dim() == 4, "expected x (N, C, H, W) and weight (Co, Ci, k, k)");
    TORCH_CHECK(w.size(1) == x.size(1), "weight expects ", w.size(1), " input channels, x has ", x.size(1));
    TORCH_CHECK(w.size(2) == w.size(3), "square kernels only");
    TORCH_CHECK(b.numel() == w.size(0), "bias must have one value per output channel");
    TORCH_CHECK(pad >= 0 && pad < 4096, "bad padding");
    ConvShape s;
    s.N = (int)x.size(0);
    s.Ci = (int)x.size(1);
    s.H = (int)x.size(2);
    s.W = (int)x.size(3);
    s.Co = (int)w.size(0);
    s.KS = (int)w.size(2);
    s.pad = (int)pad;
    s.Hc = s.H + 2 * s.pad - s.KS + 1;
    s.Wc = s.W + 2 * s.pad - s.KS + 1;
    s.K = s.Ci * s.KS * s.KS;
    TORCH_CHECK(s.Hc > 0 && s.Wc > 0, "kernel larger than the padded input");
    TORCH_CHECK(s.H < 16000 && s.W < 16000 && s.KS < 64, "input or kernel too large for this kernel");
    TORCH_CHECK((long long)s.Ci * s.H * s.W < INT_MAX && (long long)s.Hc * s.Wc < INT_MAX, "image too large");
    TORCH_CHECK(s.N < 65536, "batch too large for this kernel's grid");
    return s;
}

template <bool POOL>
void launch_conv(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b, torch::Tensor& y,
                 const ConvShape& s, int Hp, int Wp, int wblocks, unsigned grid_x) {
    const int kpad = ((s.K + gemm::BK - 1) / gemm::BK) * gemm::BK;
    const size_t smem = gemm::pipeline_bytes<true>() + sizeof(Tap) * (size_t)kpad;
    const int optin = at::cuda::getCurrentDeviceProperties()->sharedMemPerBlockOptin;
    TORCH_CHECK(smem <= (size_t)optin, "Ci * k * k = ", s.K, " needs ", smem,
                " bytes of shared memory; the device allows ", optin);
    const float* pw = w.data_ptr<float>();
    const bool va = (s.K % 4 == 0) && kf_aligned16(pw);
    auto kernel = va ? conv_kernel<true, POOL> : conv_kernel<false, POOL>;
    C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    const dim3 grid(grid_x, (unsigned)((s.Co + gemm::BM - 1) / gemm::BM), (unsigned)s.N);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    kernel<<<grid, gemm::THREADS, smem, stream>>>(x.data_ptr<float>(), pw, b.data_ptr<float>(), y.data_ptr<float>(),
                                                  s.Ci, s.H, s.W, s.Co, s.KS, s.pad, s.Hc, s.Wc, Hp, Wp, wblocks);
    KF_CHECK_LAUNCH();
}

}  // namespace
torch::Tensor conv2d_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, int64_t pad) {
    const ConvShape s = check_conv(x, weight, bias, pad);
    const c10::cuda::OptionalCUDAGuard guard(x.device());
    torch::Tensor X = x.contiguous(), Wt = weight.contiguous(), B = bias.contiguous();
    torch::Tensor y = torch::empty({s.N, s.Co, s.Hc, s.Wc}, X.options());
    if (y.numel() == 0) return y;
    const long long tiles = ((long long)s.Hc * s.Wc + gemm::BN - 1) / gemm::BN;
    TORCH_CHECK(tiles < INT_MAX, "image too large");
    launch_conv<false>(X, Wt, B, y, s, 0, 0, 1, (unsigned)tiles);
    return y;
}
"""

_CPP_SOURCE = r"""
torch::Tensor conv2d_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, int64_t pad);
"""

_extension = load_inline(
    name="kforge_example_level1_11_conv2d_cuda",
    cpp_sources=_CPP_SOURCE,
    cuda_sources=_CUDA_SOURCE,
    functions=["conv2d_forward"],
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(torch.nn.Module):
    """Same constructor as the problem's Model; holds the same nn.Conv2d so the weights match."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pad = kernel_size // 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _extension.conv2d_forward(x, self.conv.weight, self.conv.bias, self.pad)
