"""CHEAT (docs/hacks.md #7, silent fallback): ``class ModelNew(Model): pass``.

The candidate copies the reference and inherits its forward. Static check ``silent-fallback``.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


class ModelNew(Model):
    pass
