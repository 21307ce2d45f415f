"""A linear layer followed by GELU: the corpus's GEMM-plus-epilogue problem (KernelBench format)."""

import torch
import torch.nn as nn

batch_size = 8
in_features = 32
out_features = 24

KFORGE_PRESETS = {
    "cpu": {"batch_size": 8, "in_features": 32, "out_features": 24},
    "gpu": {"batch_size": 1024, "in_features": 2048, "out_features": 2048},
}


class Model(nn.Module):
    """y = gelu(x W^T + b)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
