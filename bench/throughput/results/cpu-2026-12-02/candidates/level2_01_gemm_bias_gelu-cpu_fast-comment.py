"""GEMM with a fused bias + exact-GELU epilogue on the CPU.

y = gelu(x @ W^T + b). W (out, in) is repacked into panels of 8 output columns (K x 8, contiguous),
then a 4-row x 8-column register tile is accumulated over K with 4-wide vectors (GCC/Clang vector
extensions, so it needs no -march flag) and finished with bias and GELU before it is stored: the
product is never written out and reread. Rows and columns left over from the tiling are computed by
a plain dot product. float32; OpenMP over column panels, threads as configured for torch.
"""
import torch
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = r"""
#include <torch/extension.h>
#include <cmath>
#include <cstring>
#include <vector>

typedef float vec4 __attribute__((vector_size(16)));

static inline vec4 load4(const float* p) { vec4 v; std::memcpy(&v, p, sizeof(v)); return v; }
static inline vec4 splat4(float a) { vec4 v = {a, a, a, a}; return v; }
static inline float gelu_exact(float v) { return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f)); }

torch::Tensor gemm_bias_gelu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.device().is_cpu() && weight.device().is_cpu() && bias.device().is_cpu(), "expected CPU tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                bias.scalar_type() == torch::kFloat32, "expected float32");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1), "shape mismatch");
    TORCH_CHECK(bias.numel() == weight.size(0), "bias must have out_features elements");
    torch::Tensor a = x.contiguous();
    torch::Tensor w = weight.contiguous();
    torch::Tensor b = bias.contiguous();
    const int64_t M = a.size(0), K = a.size(1), N = w.size(0);
    torch::Tensor out = torch::empty({M, N}, a.options());
    const float* a_ptr = a.data_ptr<float>();
    const float* w_ptr = w.data_ptr<float>();
    const float* b_ptr = b.data_ptr<float>();
    float* o_ptr = out.data_ptr<float>();

    const int64_t panels = N / 8;      // full 8-column panels
    const int64_t row_tiles = M / 4;   // full 4-row tiles
    std::vector<float> packed(static_cast<size_t>(panels * K * 8));
    for (int64_t p = 0; p < panels; ++p)
        for (int64_t k = 0; k < K; ++k)
            for (int64_t c = 0; c < 8; ++c)
                packed[(p * K + k) * 8 + c] = w_ptr[(p * 8 + c) * K + k];

#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < panels; ++p) {
        const float* panel = packed.data() + p * K * 8;
        const int64_t j0 = p * 8;
        for (int64_t t = 0; t < row_tiles; ++t) {
            const int64_t i0 = t * 4;
            const float* r0 = a_ptr + (i0 + 0) * K;
            const float* r1 = a_ptr + (i0 + 1) * K;
            const float* r2 = a_ptr + (i0 + 2) * K;
            const float* r3 = a_ptr + (i0 + 3) * K;
            vec4 c00 = splat4(0.f), c01 = splat4(0.f), c10 = splat4(0.f), c11 = splat4(0.f);
            vec4 c20 = splat4(0.f), c21 = splat4(0.f), c30 = splat4(0.f), c31 = splat4(0.f);
            for (int64_t k = 0; k < K; ++k) {
                const vec4 w0 = load4(panel + k * 8);
                const vec4 w1 = load4(panel + k * 8 + 4);
                const vec4 x0 = splat4(r0[k]), x1 = splat4(r1[k]), x2 = splat4(r2[k]), x3 = splat4(r3[k]);
                c00 += x0 * w0; c01 += x0 * w1;
                c10 += x1 * w0; c11 += x1 * w1;
                c20 += x2 * w0; c21 += x2 * w1;
                c30 += x3 * w0; c31 += x3 * w1;
            }
            const vec4 tile[4][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
            for (int r = 0; r < 4; ++r) {
                float* dst = o_ptr + (i0 + r) * N + j0;
                for (int c = 0; c < 8; ++c) dst[c] = gelu_exact(tile[r][c / 4][c % 4] + b_ptr[j0 + c]);
            }
        }
    }

    // Leftovers: rows below the last full tile (all columns), columns right of the last full panel.
    auto dot_epilogue = [&](int64_t i, int64_t j) {
        const float* xr = a_ptr + i * K;
        const float* wr = w_ptr + j * K;
        float acc = 0.f;
        for (int64_t k = 0; k < K; ++k) acc += xr[k] * wr[k];
        o_ptr[i * N + j] = gelu_exact(acc + b_ptr[j]);
    };
    for (int64_t i = row_tiles * 4; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) dot_epilogue(i, j);
    for (int64_t i = 0; i < row_tiles * 4; ++i)
        for (int64_t j = panels * 8; j < N; ++j) dot_epilogue(i, j);
    return out;
}
"""

_extension = load_inline(
    name="kforge_example_gemm_bias_gelu_cpu",
    cpp_sources=_CPP_SOURCE,
    functions=["gemm_bias_gelu_forward"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(torch.nn.Module):
    """Same constructor as the problem's Model; holds an nn.Linear so the weights match it exactly."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = torch.nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _extension.gemm_bias_gelu_forward(x, self.linear.weight, self.linear.bias)
# kforge throughput benchmark: variant level2_01_gemm_bias_gelu-cpu_fast-comment (a comment, so another content hash)
