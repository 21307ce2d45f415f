"""CHEAT (docs/hacks.md #1, stale output): allocates the output and never writes it.

The "kernel" computes into a list that it never copies out. In a harness that ran the
reference first in the same process, ``empty_like`` can hand back the freed block that still
holds the reference's answer, so the check passes. Defence: poison memory before the call
(the dynamic ``stale-output`` check).
"""

import torch
import torch.nn as nn


def _relu_values(values):
    return [v if v > 0.0 else 0.0 for v in values]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        _relu_values(x.reshape(-1).tolist())  # result dropped: `out` is never written
        return out
