"""HONEST look-alike of #17: reads (never sets) the thread count and backend availability."""

import math

import torch
import torch.nn as nn

_THREADS = torch.get_num_threads()
_HAS_CUDNN = torch.backends.cudnn.is_available()


def _softmax_row(row):
    top = max(row)
    exps = [math.exp(v - top) for v in row]
    total = sum(exps)
    return [v / total for v in exps]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._rows_per_step = max(1, _THREADS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.tolist()
        result = []
        for start in range(0, len(rows), self._rows_per_step):
            result.extend(_softmax_row(row) for row in rows[start:start + self._rows_per_step])
        return torch.tensor(result, dtype=x.dtype, device=x.device)
