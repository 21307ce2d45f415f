"""LayerNorm over a wide normalized shape: the corpus's near-identity problem (KernelBench format).

Each row is normalized over 256 x 512 = 131072 standard-normal values, so its mean is within about
0.003 of 0 and its spread within about 0.002 of 1: on these inputs, with the weight at 1 and the
bias at 0 as constructed, the output is close to the input itself, and a copy passes
atol = rtol = 1e-2 (docs/hacks.md #21; smaller rows fail: at 65536 values per row a copy fails
about one seed in twenty). KernelBench's level-1 LayerNorm normalizes 4194304 values per row.
"""

import torch
import torch.nn as nn

batch_size = 2
features = 256
dim = 512

KFORGE_PRESETS = {
    "cpu": {"batch_size": 2, "features": 256, "dim": 512},
    "gpu": {"batch_size": 16, "features": 64, "dim": 65536},
}


class Model(nn.Module):
    """nn.LayerNorm over the last two dimensions of a (batch_size, features, dim) input."""

    def __init__(self, features: int, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm((features, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, features, dim)]


def get_init_inputs():
    return [features, dim]
