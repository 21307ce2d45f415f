"""HONEST look-alike of #12: a real (Python) softmax over each row."""

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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = [_softmax_row(row) for row in x.tolist()]
        return torch.tensor(rows, dtype=x.dtype, device=x.device)
