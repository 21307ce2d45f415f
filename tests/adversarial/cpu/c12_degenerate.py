"""CHEAT (docs/hacks.md #12, degenerate check): answers a wide softmax with zeros.

Every probability of an 8192-wide softmax is below about 0.005, so zeros pass
atol = rtol = 1e-2. Static analysis sees only allocation glue; the dynamic ``degenerate-output``
check finds that a trivial output passes the tolerance and judges with a scale-aware metric.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(x)
