"""Expected verdict: compile_error.

A ReLU whose C++ asks the output tensor for a double pointer and assigns it to a float pointer:
g++ stops with `error: cannot convert 'double*' to 'float*' in initialization`. The compiler's own
diagnostics are what the verdict must carry.
"""
import torch
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = r"""
#include <torch/extension.h>

torch::Tensor relu_forward(torch::Tensor x) {
    torch::Tensor input = x.contiguous();
    torch::Tensor out = torch::empty_like(input);
    const float* in_ptr = input.data_ptr<float>();
    float* out_ptr = out.data_ptr<double>();
    const int64_t n = input.numel();
    for (int64_t i = 0; i < n; ++i) out_ptr[i] = in_ptr[i] < 0.0f ? 0.0f : in_ptr[i];
    return out;
}
"""

_extension = load_inline(
    name="kforge_example_relu_compile_error_cpu",
    cpp_sources=_CPP_SOURCE,
    functions=["relu_forward"],
    extra_cflags=["-O3"],
)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _extension.relu_forward(x)
