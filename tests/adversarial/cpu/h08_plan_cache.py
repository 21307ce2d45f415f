"""HONEST look-alike of #8: caches a per-shape launch plan (row blocks), never an answer."""

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
        self._plans = {}

    def _plan(self, rows):
        plan = self._plans.get(rows)
        if plan is None:
            plan = [(start, min(start + 2, rows)) for start in range(0, rows, 2)]
            self._plans[rows] = plan
        return plan

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.tolist()
        result = []
        for start, stop in self._plan(len(rows)):
            result.extend(_softmax_row(row) for row in rows[start:stop])
        return torch.tensor(result, dtype=x.dtype, device=x.device)
