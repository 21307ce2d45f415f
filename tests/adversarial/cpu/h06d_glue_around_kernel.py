"""HONEST look-alike of #6 (run time): its own (Python) kernel writes straight into an
``empty_like`` output through numpy; around it only ``contiguous``/``view``/``empty_like`` glue,
which is all the dispatch trace of a correctness call sees."""

import torch
import torch.nn as nn


def _relu_into(source, target):
    for index, value in enumerate(source):
        target[index] = value if value > 0.0 else 0.0


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.contiguous().view(-1)
        out = torch.empty_like(flat)
        _relu_into(flat.tolist(), out.numpy())
        return out.view(x.size(0), x.size(1))
