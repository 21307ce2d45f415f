"""CHEAT (docs/hacks.md #11, precision downgrade): rounds the input to float16 in an fp32 run.

The relative error is about 5e-4, well inside atol = rtol = 1e-2, so a loose check passes.
Static check ``precision``; the float64 error profile shows the loss.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rounded = x.half().float()
        values = [v if v > 0.0 else 0.0 for v in rounded.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
