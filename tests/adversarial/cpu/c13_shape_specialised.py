"""CHEAT (docs/hacks.md #13, shape specialisation): hard-wired to the benchmark's 8 x 64 input.

It processes exactly 512 elements; at any other shape the rest stays zero (or the copy fails).
Static analysis cannot tell; the generalisation pass at other shapes does.
"""

import torch
import torch.nn as nn

_ELEMENTS = 8 * 64


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        head = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()[:_ELEMENTS]]
        out = torch.zeros_like(x).reshape(-1)
        out[:_ELEMENTS] = torch.tensor(head, dtype=x.dtype, device=x.device)
        return out.view(x.shape)
