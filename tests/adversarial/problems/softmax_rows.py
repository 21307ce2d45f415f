"""Softmax over short rows, written out as the reference's own arithmetic (KernelBench format).

The reference runs max, subtraction, exp, sum and division; it never calls PyTorch's softmax, so
a candidate that hands the rows to `torch.softmax` substitutes an operator the reference does not
run (docs/spec.md section 8, `substituted_ops`).
"""

import torch
import torch.nn as nn

batch_size = 8
dim = 32

KFORGE_PRESETS = {
    "cpu": {"batch_size": 8, "dim": 32},
    "gpu": {"batch_size": 4096, "dim": 1024},
}


class Model(nn.Module):
    """Row-wise softmax: exp(x - max) / sum(exp(x - max))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shifted = x - x.max(dim=1, keepdim=True).values
        exps = torch.exp(shifted)
        return exps / exps.sum(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
