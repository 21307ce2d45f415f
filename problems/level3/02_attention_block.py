"""Pre-norm multi-head self-attention block (no mask, no dropout): y = x + W_o attn(layer_norm(x)).

attn: q, k, v = split(W_qkv h + b_qkv) into n_heads heads of d_model / n_heads;
per head softmax(q k^T / sqrt(d_head)) v; heads concatenated, then the output projection (with bias).
x: (batch_size, seq_len, d_model) float32 -> y: same shape.
gpu preset: (16, 1024, 1024, 16 heads): projections 2 B S D (3D + D) = 137 GFLOP, scores and
weighted sum 4 B S^2 D = 69 GFLOP, 206 GFLOP in all; the (16, 16, 1024, 1024) score tensor is 1 GiB,
which eager writes and rereads several times (a fused attention never stores it).
"""
import math

import torch
import torch.nn.functional as F

batch_size = 16
seq_len = 1024
d_model = 1024
n_heads = 16

KFORGE_PRESETS = {
    "cpu": {"batch_size": 2, "seq_len": 128, "d_model": 256, "n_heads": 4},
    "gpu": {"batch_size": 16, "seq_len": 1024, "d_model": 1024, "n_heads": 16},
}


class Model(torch.nn.Module):
    """LayerNorm, fused QKV projection, scaled dot-product attention, output projection, residual."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_heads = n_heads
        self.norm = torch.nn.LayerNorm(d_model)
        self.qkv = torch.nn.Linear(d_model, 3 * d_model)
        self.out = torch.nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        d_head = d // self.n_heads
        qkv = self.qkv(self.norm(x)).view(b, s, 3, self.n_heads, d_head).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_head)
        context = torch.matmul(F.softmax(scores, dim=-1), v)
        context = context.transpose(1, 2).reshape(b, s, d)
        return x + self.out(context)


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, n_heads]
