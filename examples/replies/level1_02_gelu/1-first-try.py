"""A first attempt at the tanh-GELU problem, as a model might write it: one OpenMP loop calling
std::tanh. Correct, but std::tanh does not vectorise; `2-fast.py` replaces it with a branch-free
exponential. Used as the first "reply" of the README's files-provider run."""
import torch
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor gelu_first_try(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "expected a float32 CPU tensor");
    torch::Tensor input = x.contiguous();
    torch::Tensor out = torch::empty_like(input);
    const float* in = input.data_ptr<float>();
    float* o = out.data_ptr<float>();
    const int64_t n = input.numel();
#pragma omp parallel for
    for (int64_t i = 0; i < n; ++i) {
        const float v = in[i];
        o[i] = 0.5f * v * (1.0f + std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    }
    return out;
}
"""

_extension = load_inline(
    name="kforge_example_gelu_first_try",
    cpp_sources=_CPP_SOURCE,
    functions=["gelu_first_try"],
    extra_cflags=["-O2", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _extension.gelu_first_try(x)
