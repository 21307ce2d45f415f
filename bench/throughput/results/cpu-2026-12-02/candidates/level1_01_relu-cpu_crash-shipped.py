"""Expected verdict: crashed (the process dies of SIGSEGV).

The C++ builds and loads, but writes its results through a null output pointer. The pointer is
`volatile` so the optimiser cannot prove it null and replace the store with a trap instruction
(which would die of SIGILL instead): the store really happens, at address 0.
"""
import torch
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = r"""
#include <torch/extension.h>

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "expected a float32 CPU tensor");
    torch::Tensor input = x.contiguous();
    torch::Tensor out = torch::empty_like(input);
    const float* in_ptr = input.data_ptr<float>();
    float* volatile out_ptr = nullptr;  // should have been out.data_ptr<float>()
    const int64_t n = input.numel();
    for (int64_t i = 0; i < n; ++i) out_ptr[i] = in_ptr[i] < 0.0f ? 0.0f : in_ptr[i];
    return out;
}
"""

_extension = load_inline(
    name="kforge_example_relu_null_write_cpu",
    cpp_sources=_CPP_SOURCE,
    functions=["relu_forward"],
    extra_cflags=["-O3"],
)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _extension.relu_forward(x)
