"""Batched matrix multiply: C[b] = A[b] @ B[b].

A: (batch_size, m, k), B: (batch_size, k, n) float32 -> C: (batch_size, m, n).
gpu preset: (128, 1024, 1024, 1024): 2 b m k n = 275 GFLOP, 3 x 512 MiB = 1.5 GiB touched at least;
compute-bound (~4.6 ms at 60 TFLOP/s fp32, ~0.7 ms at 400 TFLOP/s tf32).
"""
import torch

batch_size = 128
m = 1024
k = 1024
n = 1024

KFORGE_PRESETS = {
    "cpu": {"batch_size": 16, "m": 128, "k": 256, "n": 128},
    "gpu": {"batch_size": 128, "m": 1024, "k": 1024, "n": 1024},
}


class Model(torch.nn.Module):
    """A batch of independent matrix products."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(batch_size, m, k), torch.randn(batch_size, k, n)]


def get_init_inputs():
    return []
