"""Softmax over the last dimension: y[i, j] = exp(x[i, j] - max_j x[i, :]) / sum_j exp(...).

x: (batch_size, dim) float32 -> y: (batch_size, dim).
gpu preset: (4096, 65536) = 2^28 elements, 1 GiB read + 1 GiB written at best, ~2^28 exps.
"""
import torch

batch_size = 4096
dim = 65536

KFORGE_PRESETS = {
    "cpu": {"batch_size": 512, "dim": 16384},
    "gpu": {"batch_size": 4096, "dim": 65536},
}


class Model(torch.nn.Module):
    """Row-wise softmax."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
