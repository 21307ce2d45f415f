"""HONEST look-alike of #2: works in place, but on its own copy of the input."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        values = [v if v > 0.0 else 0.0 for v in y.reshape(-1).tolist()]
        y.copy_(torch.tensor(values, dtype=y.dtype, device=y.device).view_as(y))
        return y
