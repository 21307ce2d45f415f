"""RMS normalisation over the last dimension, written out as LLaMA-style code writes it.

y = x * rsqrt(mean(x^2 over the last dim) + eps) * weight
weight is random (not ones), so a kernel that ignores it fails.
x: (batch_size, seq_len, hidden) float32 -> y: same shape; weight: (hidden,).
gpu preset: (32, 2048, 4096) = 2^28 elements, 1 GiB read + 1 GiB written at best, ~4 FLOPs/element.
"""
import torch

batch_size = 32
seq_len = 2048
hidden = 4096
eps = 1e-6

KFORGE_PRESETS = {
    "cpu": {"batch_size": 16, "seq_len": 256, "hidden": 1024},
    "gpu": {"batch_size": 32, "seq_len": 2048, "hidden": 4096},
}


class Model(torch.nn.Module):
    """RMSNorm(hidden) with a random scale."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(1.0 + 0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean_square = x.pow(2).mean(dim=-1, keepdim=True)
        return x * torch.rsqrt(mean_square + self.eps) * self.weight


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden, eps]
