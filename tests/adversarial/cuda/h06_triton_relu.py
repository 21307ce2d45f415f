"""HONEST look-alike of #6 (Triton): a relu Triton kernel launched in forward on an ``empty_like``
output; the profiler lists it under its function's name (``kforge_relu_kernel``)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def kforge_relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    values = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, tl.where(values > 0.0, values, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.contiguous().view(-1)
        out = torch.empty_like(flat)
        n = flat.numel()
        kforge_relu_kernel[(triton.cdiv(n, BLOCK_SIZE),)](flat, out, n, BLOCK=BLOCK_SIZE)
        return out.view(x.size(0), x.size(1))
