"""HONEST look-alike of #21: a real LayerNorm (numpy), the mean and variance of every row computed.

The same affine parameters and the same one-buffer output as the cheat c21, but each row is
centred and scaled by its own statistics (accumulated in float64), so it stays right on inputs
scaled and shifted away from the standard normal. Expected: correct.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm((features, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        values = x.detach().numpy().reshape(x.shape[0], -1).astype("float64")
        mean = values.mean(axis=1, keepdims=True)
        variance = ((values - mean) ** 2).mean(axis=1, keepdims=True)
        normalized = (values - mean) / (variance + self.norm.eps) ** 0.5
        weight = self.norm.weight.detach().numpy().reshape(1, -1)
        bias = self.norm.bias.detach().numpy().reshape(1, -1)
        out.numpy().reshape(x.shape[0], -1)[...] = normalized * weight + bias
        return out
