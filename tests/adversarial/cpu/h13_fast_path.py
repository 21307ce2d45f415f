"""HONEST look-alike of #13: a fast path for the common row length, a general path otherwise."""

import torch
import torch.nn as nn


def _relu_rows_64(rows):
    return [[v if v > 0.0 else 0.0 for v in row] for row in rows]


def _relu_general(values):
    return [v if v > 0.0 else 0.0 for v in values]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 2 and x.shape[1] == 64:
            result = torch.tensor(_relu_rows_64(x.tolist()), dtype=x.dtype, device=x.device)
        else:
            result = torch.tensor(_relu_general(x.reshape(-1).tolist()), dtype=x.dtype, device=x.device)
        return result.view(x.shape)
