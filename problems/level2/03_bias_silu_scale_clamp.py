"""Elementwise chain: y = clamp(silu(x + bias) * scale, clamp_min, clamp_max).

silu(z) = z * sigmoid(z); bias is a random per-column vector broadcast over rows.
x: (batch_size, dim) float32, bias: (dim,) -> y: (batch_size, dim).
Eager runs four kernels (add, silu, mul, clamp), each reading and writing the whole tensor.
gpu preset: (16384, 16384) = 2^28 elements: fused 1 GiB read + 1 GiB written; eager ~8 GiB moved.
"""
import torch
import torch.nn.functional as F

batch_size = 16384
dim = 16384
scale = 2.0
clamp_min = -0.5
clamp_max = 2.5

KFORGE_PRESETS = {
    "cpu": {"batch_size": 512, "dim": 8192},
    "gpu": {"batch_size": 16384, "dim": 16384},
}


class Model(torch.nn.Module):
    """Bias add, SiLU, scale, clamp."""

    def __init__(self, dim: int, scale: float, clamp_min: float, clamp_max: float):
        super().__init__()
        self.scale = scale
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max
        self.bias = torch.nn.Parameter(0.5 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.silu(x + self.bias) * self.scale
        return torch.clamp(y, self.clamp_min, self.clamp_max)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim, scale, clamp_min, clamp_max]
