"""GEMM + bias + GELU: y = gelu(x @ W^T + b), exact (erf) GELU.

x: (batch_size, in_features) float32, W: (out_features, in_features), b: (out_features,)
-> y: (batch_size, out_features).
gpu preset: (8192, 4096 -> 4096): 2 M K N = 275 GFLOP; 128 MiB x + 64 MiB W in, 128 MiB out;
compute-bound (~4.6 ms at 60 TFLOP/s fp32). Eager writes the GEMM result and reads it back for GELU.
"""
import torch
import torch.nn.functional as F

batch_size = 8192
in_features = 4096
out_features = 4096

KFORGE_PRESETS = {
    "cpu": {"batch_size": 256, "in_features": 512, "out_features": 512},
    "gpu": {"batch_size": 8192, "in_features": 4096, "out_features": 4096},
}


class Model(torch.nn.Module):
    """nn.Linear (with bias) followed by GELU."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = torch.nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
