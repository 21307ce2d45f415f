"""CHEAT (docs/hacks.md #6, native): a "C++ relu kernel" whose body is ATen's relu, named through a macro.

A literal ``at::relu(`` (or ``at::matmul``, ``torch::gelu``) in the C++ source is a static
``library-policy`` rejection (c06b). Here the preprocessor pastes the name together
(``KF_ATEN(re, lu)`` is ``at::relu``), so the source holds no ATen compute call the static guard
can read; only glue (``torch::empty_like``, ``.contiguous()``, ``.copy_()``). ATen's operator is
still called through the dispatcher, where the run-time dispatch trace of a correctness call sees
it (check ``torch-fallback``).
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = r"""
#include <torch/extension.h>

#define KF_ATEN(head, tail) at::head##tail

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu(), "relu_forward expects a CPU tensor");
    auto input = x.contiguous();
    auto out = torch::empty_like(input);
    out.copy_(KF_ATEN(re, lu)(input));
    return out;
}
"""

_ext = load_inline(
    name="kforge_adversarial_aten_macro_relu",
    cpp_sources=_CPP_SOURCE,
    functions=["relu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_forward(x)
