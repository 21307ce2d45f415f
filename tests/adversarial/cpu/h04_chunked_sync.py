"""HONEST look-alike of #4: splits the work into chunks, all on the calling thread.

It imports ``threading`` only for a lock around its chunk-plan cache (a note, not a rejection).
"""

import threading

import torch
import torch.nn as nn

_PLAN_LOCK = threading.Lock()


def _chunks(count, size):
    return [(start, min(start + size, count)) for start in range(0, count, size)]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._plans = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = x.reshape(-1).tolist()
        count = len(values)
        with _PLAN_LOCK:
            plan = self._plans.setdefault(count, _chunks(count, 128))
        result = []
        for start, stop in plan:
            result.extend(v if v > 0.0 else 0.0 for v in values[start:stop])
        return torch.tensor(result, dtype=x.dtype, device=x.device).view(x.shape)
