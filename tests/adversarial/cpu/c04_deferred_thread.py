"""CHEAT (docs/hacks.md #4, deferred work): returns at once and lets a thread fill the output.

The timed call returns an empty tensor; a background thread writes the answer a moment later,
before a naive harness gets round to comparing. Static check ``deferred-work``.
"""

import threading

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        source = x.reshape(-1).tolist()

        def fill():
            values = [v if v > 0.0 else 0.0 for v in source]
            out.copy_(torch.tensor(values, dtype=out.dtype).view_as(out))

        threading.Thread(target=fill, daemon=True).start()
        return out
