"""HONEST look-alike of #6: its own (Python) kernel, with only view/contiguous/empty_like glue."""

import torch
import torch.nn as nn


def _relu_kernel(values):
    return [v if v > 0.0 else 0.0 for v in values]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.contiguous().view(-1)
        out = torch.empty_like(flat)
        out.copy_(torch.tensor(_relu_kernel(flat.tolist()), dtype=flat.dtype, device=flat.device))
        return out.view(x.size(0), x.size(1))
