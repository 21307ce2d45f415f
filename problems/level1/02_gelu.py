"""GELU, tanh approximation, written out as GPT-2 writes it.

y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))

Eager PyTorch runs this as a chain of about eight elementwise kernels; one fused pass is the goal.
x: (batch_size, dim) float32 -> y: (batch_size, dim).
gpu preset: (16384, 16384) = 2^28 elements, 1 GiB read + 1 GiB written (fused), ~10 FLOPs/element.
"""
import math

import torch

batch_size = 16384
dim = 16384

KFORGE_PRESETS = {
    "cpu": {"batch_size": 256, "dim": 8192},
    "gpu": {"batch_size": 16384, "dim": 16384},
}


class Model(torch.nn.Module):
    """Tanh-approximated GELU, as separate elementwise operations."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))
        return 0.5 * x * (1.0 + torch.tanh(inner))


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
