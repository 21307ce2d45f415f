"""ReLU as a Triton kernel: a 1-D grid of programs, each loading BLOCK contiguous elements with a
mask for the ragged end, and storing max(x, 0) (NaN kept, like torch.relu). 64-bit offsets, so
tensors past 2^31 elements are fine. float32 (any dtype Triton can load works the same way).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _relu_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK
    offsets = start + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.where(x < 0.0, 0.0, x)
    tl.store(out_ptr + offsets, y, mask=mask)


_BLOCK = 4096


class ModelNew(torch.nn.Module):
    """Same interface as the problem's Model: no parameters, forward(x)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n == 0:
            return out
        grid = (triton.cdiv(n, _BLOCK),)
        _relu_kernel[grid](x, out, n, BLOCK=_BLOCK, num_warps=8)
        return out
