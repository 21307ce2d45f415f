"""The mean of each row after a ReLU: the corpus's reduction problem (KernelBench format)."""

import torch
import torch.nn as nn

batch_size = 8
dim = 64

KFORGE_PRESETS = {
    "cpu": {"batch_size": 8, "dim": 64},
    "gpu": {"batch_size": 256, "dim": 8192},
}


class Model(nn.Module):
    """y[i] = mean_j max(x[i, j], 0)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x).mean(dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
