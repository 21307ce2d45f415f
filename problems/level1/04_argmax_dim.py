"""Argmax over the middle dimension: y = x.argmax(dim=1).

x: (batch_size, dim1, dim2) float32 -> y: (batch_size, dim2) int64.
Ties resolve to the first (lowest) index, as torch.argmax documents; at fp16 ties do occur.
gpu preset: (128, 4096, 1024) = 2^29 elements, 2 GiB read, 1 MiB written, 2^29 compares.
"""
import torch

batch_size = 128
dim1 = 4096
dim2 = 1024
reduce_dim = 1

KFORGE_PRESETS = {
    "cpu": {"batch_size": 16, "dim1": 1024, "dim2": 512},
    "gpu": {"batch_size": 128, "dim1": 4096, "dim2": 1024},
}


class Model(torch.nn.Module):
    """Index of the largest value along one dimension."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]
