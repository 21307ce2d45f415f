"""Softmax over a wide row: the corpus's degenerate-tolerance problem (KernelBench format).

With 8192 columns every probability is below about 0.005, so an all-zeros output passes
atol = rtol = 1e-2 (docs/hacks.md #12). Use it to check that the evaluator notices.
"""

import torch
import torch.nn as nn

batch_size = 4
dim = 8192

KFORGE_PRESETS = {
    "cpu": {"batch_size": 4, "dim": 8192},
    "gpu": {"batch_size": 64, "dim": 32768},
}


class Model(nn.Module):
    """Softmax along dim 1 of a (batch_size, dim) input."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
