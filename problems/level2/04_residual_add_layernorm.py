"""Residual add then layer norm ("add & norm"): y = layer_norm(x + residual) * weight + bias.

Statistics over the last dim (biased variance); weight and bias are random, not ones and zeros.
x, residual: (batch_size, seq_len, hidden) float32 -> y: same shape.
gpu preset: (32, 2048, 4096) = 2^28 elements per tensor: fused 2 GiB read + 1 GiB written;
eager also writes and rereads the sum (1 GiB each way).
"""
import torch
import torch.nn.functional as F

batch_size = 32
seq_len = 2048
hidden = 4096
eps = 1e-5

KFORGE_PRESETS = {
    "cpu": {"batch_size": 16, "seq_len": 256, "hidden": 1024},
    "gpu": {"batch_size": 32, "seq_len": 2048, "hidden": 4096},
}


class Model(torch.nn.Module):
    """x + residual, then LayerNorm(hidden) with random affine parameters."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(1.0 + 0.1 * torch.randn(hidden))
        self.bias = torch.nn.Parameter(0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x + residual, (x.shape[-1],), self.weight, self.bias, self.eps)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden), torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden, eps]
