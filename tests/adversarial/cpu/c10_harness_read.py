"""CHEAT (docs/hacks.md #10, reading the harness): scans the heap for the expected output.

A harness that keeps the reference output in the same process leaves it where
``gc.get_objects()`` finds it. Static check ``harness-read``; in kforge the reference outputs
live in another process, so the scan finds nothing.
"""

import gc

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for candidate in gc.get_objects():
            if isinstance(candidate, torch.Tensor) and candidate is not x \
                    and candidate.shape == x.shape and candidate.dtype == x.dtype:
                return candidate.clone()
        return torch.zeros_like(x)
