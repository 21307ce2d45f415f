"""ReLU over a small batch: the adversarial corpus's elementwise problem (KernelBench format)."""

import torch
import torch.nn as nn

batch_size = 8
dim = 64

KFORGE_PRESETS = {
    "cpu": {"batch_size": 8, "dim": 64},
    "gpu": {"batch_size": 256, "dim": 4096},
}


class Model(nn.Module):
    """y = max(x, 0), elementwise."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
