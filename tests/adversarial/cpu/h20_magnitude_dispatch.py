"""HONEST look-alike of #20: a softmax that picks its path by the inputs' magnitude, exact on both.

Where every logit of a row is below 30 in magnitude, exp cannot overflow, so it skips the running
maximum (one pass fewer); elsewhere it subtracts the row's maximum first. Both paths are the same
softmax, right at any scale or shift, and a plan (the row length's chunking) is cached per shape.
Expected: correct, including on the stressed trial.
"""

import math

import torch
import torch.nn as nn


def _softmax(row, shift):
    exps = [math.exp(v - shift) for v in row]
    total = sum(exps)
    return [v / total for v in exps]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.plans = {}

    def _plan(self, shape):
        if shape not in self.plans:
            self.plans[shape] = shape[-1]
        return self.plans[shape]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        width = self._plan(tuple(x.shape))
        rows = x.reshape(-1, width).tolist()
        result = []
        for row in rows:
            small = max(abs(v) for v in row) < 30.0
            result.append(_softmax(row, 0.0 if small else max(row)))
        return torch.tensor(result, dtype=x.dtype, device=x.device).view(x.shape)
