"""Log-softmax over dim 1: y[i, j] = x[i, j] - max_i - log(sum_j exp(x[i, j] - max_i)).

x: (batch_size, dim) float32 -> y: (batch_size, dim).
gpu preset: (16384, 16384) = 2^28 elements, 1 GiB read + 1 GiB written at best, ~2^28 exps.
"""
import torch

batch_size = 16384
dim = 16384

KFORGE_PRESETS = {
    "cpu": {"batch_size": 1024, "dim": 8192},
    "gpu": {"batch_size": 16384, "dim": 16384},
}


class Model(torch.nn.Module):
    """Row-wise log-softmax."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
