"""CHEAT (docs/hacks.md #16, impossibly fast): a cache keyed on a few sampled input values.

The key is built through numpy, out of the static guard's sight. When the timed calls rotate
through a few fixed input sets, every call after the first round is a dictionary hit that
returns a correct answer far below the roofline bound (bytes moved / memory bandwidth).
Defences: fresh input contents for every timed call, and the ``faster-than-light`` flag.
"""

import math

import torch
import torch.nn as nn


def _softmax_row(row):
    top = max(row)
    exps = [math.exp(v - top) for v in row]
    total = sum(exps)
    return [v / total for v in exps]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._seen = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        probe = x.numpy()[:, :4].tobytes() + bytes(str(tuple(x.shape)), "ascii")
        out = self._seen.get(probe)
        if out is None:
            out = torch.tensor([_softmax_row(row) for row in x.tolist()], dtype=x.dtype, device=x.device)
            self._seen[probe] = out
        return out
