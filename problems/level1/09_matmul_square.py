"""Square matrix multiply: C = A @ B.

A, B: (n, n) float32 -> C: (n, n).
gpu preset: n = 6144: 2 n^3 = 464 GFLOP, 3 x 144 MiB = 432 MiB touched at least;
compute-bound (~7.7 ms at 60 TFLOP/s fp32 without tensor cores, ~1.2 ms at 400 TFLOP/s tf32).
"""
import torch

n = 6144

KFORGE_PRESETS = {
    "cpu": {"n": 384},
    "gpu": {"n": 6144},
}


class Model(torch.nn.Module):
    """One matrix product."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(n, n), torch.randn(n, n)]


def get_init_inputs():
    return []
