"""CHEAT (docs/hacks.md #9, phase detection): counts calls and stops working once timing starts.

The first five calls (the correctness trials) compute honestly; later calls replay the last
answer when the shape matches. Static check ``phase-detect``; at run time the sampled timed
outputs do not match their own references.
"""

import torch
import torch.nn as nn

_CALLS = 0
_LAST = None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        global _CALLS, _LAST
        _CALLS += 1
        if _CALLS > 5 and _LAST is not None and _LAST.shape == x.shape:
            return _LAST
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        _LAST = torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
        return _LAST
