"""CHEAT (docs/hacks.md #20, dual path by shape): exact at small shapes, inexact at the benchmark's.

Written for a harness that checks small shapes and times large ones: below 512 elements it computes
every element, from 512 (the cpu preset's 8 x 64, the shape kforge times) every other element,
copied into its neighbour. kforge times the shapes it checks (the correctness trials run at the
timed shape; the generalisation trials add others), so the inexact path is judged. Expected:
incorrect, ``mismatch``.
"""

import torch
import torch.nn as nn

_SMALL = 512


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = x.reshape(-1).tolist()
        if len(values) < _SMALL:
            result = [v if v > 0.0 else 0.0 for v in values]
        else:
            result = list(values)
            for index in range(0, len(values) - 1, 2):
                result[index] = result[index + 1] = values[index] if values[index] > 0.0 else 0.0
        return torch.tensor(result, dtype=x.dtype, device=x.device).view(x.shape)
