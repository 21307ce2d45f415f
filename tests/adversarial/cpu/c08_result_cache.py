"""CHEAT (docs/hacks.md #8, result caching): returns the stored answer when the same tensor comes back.

Timing loops usually pass the same input tensor every call, so after the first call every timed
call is a dictionary lookup. Static check ``result-cache``; at run time, timed calls on fresh
input contents expose the stale answers.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._answers = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = (x.data_ptr(), tuple(x.shape))
        if key in self._answers:
            return self._answers[key]
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        out = torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
        self._answers[key] = out
        return out
