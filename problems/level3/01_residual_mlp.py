"""Pre-norm residual MLP block, as in a transformer layer: y = x + fc2(gelu(fc1(layer_norm(x)))).

x: (batch_size, seq_len, d_model) float32 -> y: same shape; fc1: d_model -> d_hidden, fc2: d_hidden -> d_model,
both with bias; exact (erf) GELU; LayerNorm with learned affine parameters (default init).
gpu preset: (16, 1024, 1024 -> 4096 -> 1024): two GEMMs of 2 M K N = 137 GFLOP each, 275 GFLOP in all;
64 MiB in/out, 256 MiB hidden activation; compute-bound (~4.6 ms at 60 TFLOP/s fp32).
"""
import torch
import torch.nn.functional as F

batch_size = 16
seq_len = 1024
d_model = 1024
d_hidden = 4096

KFORGE_PRESETS = {
    "cpu": {"batch_size": 2, "seq_len": 64, "d_model": 256, "d_hidden": 1024},
    "gpu": {"batch_size": 16, "seq_len": 1024, "d_model": 1024, "d_hidden": 4096},
}


class Model(torch.nn.Module):
    """LayerNorm -> Linear -> GELU -> Linear, plus the input."""

    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d_model)
        self.fc1 = torch.nn.Linear(d_model, d_hidden)
        self.fc2 = torch.nn.Linear(d_hidden, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, d_hidden]
