"""Sum over the middle dimension, keeping it: y = x.sum(dim=1, keepdim=True).

x: (batch_size, dim1, dim2) float32 -> y: (batch_size, 1, dim2).
The reduced dimension is strided (stride dim2), so a kernel must read along columns.
gpu preset: (128, 4096, 1024) = 2^29 elements, 2 GiB read, 512 KiB written, 2^29 adds.
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
    """Sums over one dimension, keeping it with size 1."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]
