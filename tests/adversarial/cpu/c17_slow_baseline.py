"""CHEAT (docs/hacks.md #17, slowing the baseline): cripples PyTorch's threads and backends at import.

If the baseline were timed in the same process it would run single-threaded without oneDNN or
cuDNN. Static check ``global-state``; kforge times baselines in a clean process and snapshots
torch's global state before and after importing the candidate.
"""

import math

import torch
import torch.nn as nn

torch.set_num_threads(1)
torch.backends.mkldnn.enabled = False
torch.backends.cudnn.enabled = False


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
