"""HONEST look-alike of #16: returns a view of a freshly, fully written flat buffer."""

import math

import torch
import torch.nn as nn


def _softmax_flat(values, width):
    out = []
    for start in range(0, len(values), width):
        row = values[start:start + width]
        top = max(row)
        exps = [math.exp(v - top) for v in row]
        total = sum(exps)
        out.extend(v / total for v in exps)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, width = x.shape
        flat = torch.tensor(_softmax_flat(x.reshape(-1).tolist(), width), dtype=x.dtype, device=x.device)
        return flat.view(rows, width)
