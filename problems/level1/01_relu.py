"""ReLU, elementwise: y = max(x, 0).

x: (batch_size, dim) float32 -> y: (batch_size, dim).
gpu preset: (16384, 16384) = 2^28 elements, 1 GiB read + 1 GiB written, no FLOPs to speak of.
"""
import torch

batch_size = 16384
dim = 16384

KFORGE_PRESETS = {
    "cpu": {"batch_size": 512, "dim": 16384},
    "gpu": {"batch_size": 16384, "dim": 16384},
}


class Model(torch.nn.Module):
    """Applies ReLU to every element."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
