"""CHEAT (docs/hacks.md #17, slowing the baseline): wraps torch.softmax with a sleep.

Any reference run in this process after the import is slowed down. Static check ``timer-patch``
(a candidate may not modify modules it did not define).
"""

import functools
import math
import time

import torch
import torch.nn as nn

_original_softmax = torch.softmax


@functools.wraps(_original_softmax)
def _slowed_softmax(*args, **kwargs):
    time.sleep(0.002)
    return _original_softmax(*args, **kwargs)


torch.softmax = _slowed_softmax


def _softmax_row(row):
    top = max(row)
    exps = [math.exp(v - top) for v in row]
    total = sum(exps)
    return [v / total for v in exps]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tensor([_softmax_row(row) for row in x.tolist()], dtype=x.dtype, device=x.device)
