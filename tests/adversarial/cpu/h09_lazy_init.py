"""HONEST look-alike of #9: one-time lazy set-up on the first call and the usual ``self.training``."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._clamp = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._clamp is None:
            self._clamp = 0.0
        if self.training:
            pass  # no dropout or batch statistics in this model
        floor = self._clamp
        values = [v if v > floor else floor for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
