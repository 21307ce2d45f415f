"""HONEST look-alike of #1: allocates with ``empty_like`` and writes every element."""

import torch
import torch.nn as nn


def _relu_values(values):
    return [v if v > 0.0 else 0.0 for v in values]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        values = _relu_values(x.reshape(-1).tolist())
        out.copy_(torch.tensor(values, dtype=x.dtype, device=x.device).view_as(out))
        return out
