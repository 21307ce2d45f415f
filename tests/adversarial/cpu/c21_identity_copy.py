"""CHEAT (docs/hacks.md #21, approximately the identity): a LayerNorm that skips the statistics.

Over 131072 standard-normal values per row the mean is within a few thousandths of 0 and the
spread within a few thousandths of 1, so with the weight and bias as constructed (1 and 0) the
input itself passes atol = rtol = 1e-2. This kernel copies its input through the affine
parameters and never computes a mean or a variance: one pass instead of three. Expected:
incorrect, ``stressed-input`` (on inputs scaled by 10 and shifted by 5 the copy is ten times too
large); on the plain trials the degenerate audit finds that the input passes the tolerance, so
the scale-aware metric judges them too.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm((features, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        weight = self.norm.weight.detach().numpy()
        bias = self.norm.bias.detach().numpy()
        out.numpy()[...] = x.detach().numpy() * weight + bias
        return out
