"""Fused tanh-GELU on the CPU: one pass, one output allocation (eager makes about eight).

Uses 0.5 * x * (1 + tanh(u)) == x * sigmoid(2u) == x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3),
with a branch-free exp (Cody-Waite range reduction, degree-6 polynomial, relative error ~2e-7) so
that the compiler vectorises the loop (-fno-trapping-math, which PyTorch itself builds with, lets it
turn the clamps into selects). On x86-64 the loop is also compiled for AVX2 + FMA through a target
attribute and picked at run time when the CPU has them (no -march flag, so the build runs on any
machine). float32, any shape; OpenMP threads as configured for torch.
"""
import torch
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = r"""
#include <torch/extension.h>
#include <algorithm>
#include <cstdint>
#include <cstring>

// exp(x), branch-free so loops calling it vectorise; inputs are clamped to [-87, 88].
static inline float exp_clamped(float x) {
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    const float t = x * 1.44269504088896341f;
    const float n = (t + 12582912.0f) - 12582912.0f;  // round to nearest, |t| < 2^22
    const float g = (x - n * 0.693145751953125f) - n * 1.42860682030941723e-6f;
    float p = 1.0f / 720.0f;
    p = p * g + 1.0f / 120.0f;
    p = p * g + 1.0f / 24.0f;
    p = p * g + 1.0f / 6.0f;
    p = p * g + 0.5f;
    p = p * g + 1.0f;
    p = p * g + 1.0f;
    const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof(scale));
    return p * scale;
}

static inline void gelu_span(const float* __restrict in, float* __restrict out, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
        const float v = in[i];
        const float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
        out[i] = v / (1.0f + exp_clamped(-2.0f * u));
    }
}

constexpr int64_t kChunk = 4096;  // elements per OpenMP work item

static void gelu_all(const float* in, float* out, int64_t numel) {
#pragma omp parallel for schedule(static)
    for (int64_t start = 0; start < numel; start += kChunk)
        gelu_span(in + start, out + start, std::min(kChunk, numel - start));
}

#if defined(__x86_64__)
// The same loop compiled for AVX2 + FMA (8 floats a vector), chosen at run time when the CPU has them.
__attribute__((target("avx2,fma")))
static void gelu_all_avx2(const float* in, float* out, int64_t numel) {
#pragma omp parallel for schedule(static)
    for (int64_t start = 0; start < numel; start += kChunk)
        gelu_span(in + start, out + start, std::min(kChunk, numel - start));
}
#endif

torch::Tensor gelu_tanh_forward(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu(), "gelu_tanh_forward: expected a CPU tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "gelu_tanh_forward: expected float32");
    torch::Tensor input = x.contiguous();
    torch::Tensor out = torch::empty_like(input);
    const int64_t numel = input.numel();
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        gelu_all_avx2(input.data_ptr<float>(), out.data_ptr<float>(), numel);
        return out;
    }
#endif
    gelu_all(input.data_ptr<float>(), out.data_ptr<float>(), numel);
    return out;
}
"""

_extension = load_inline(
    name="kforge_example_gelu_tanh_cpu",
    cpp_sources=_CPP_SOURCE,
    functions=["gelu_tanh_forward"],
    extra_cflags=["-O3", "-fno-trapping-math", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(torch.nn.Module):
    """Same interface as the problem's Model: no parameters, forward(x)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _extension.gelu_tanh_forward(x)
# kforge throughput benchmark: variant level1_02_gelu-cpu_fast-comment (a comment, so another content hash)
