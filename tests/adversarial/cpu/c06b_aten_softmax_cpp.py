"""CHEAT (docs/hacks.md #6, native): a "fused C++ softmax" whose body is ATen's softmax.

The extension builds and is called, so a harness that only checks that a kernel was compiled and
launched is satisfied. Static check ``library-policy``; at run time the dispatch trace would show
aten::_softmax doing the work (c06d hides the ATen call from the static check too).
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = r"""
#include <torch/extension.h>

// Row-wise softmax, "fused".
torch::Tensor softmax_forward(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2, "softmax_forward expects a 2-D tensor");
    return torch::softmax(x.contiguous(), /*dim=*/1);
}
"""

_ext = load_inline(
    name="kforge_adversarial_aten_softmax",
    cpp_sources=_CPP_SOURCE,
    functions=["softmax_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.softmax_forward(x)
