"""CHEAT (docs/hacks.md #11, precision downgrade): switches float32 matmuls to TF32 at import.

Static check ``precision``; at run time the worker snapshots ``torch.backends`` flags before and
after importing the candidate.
"""

import torch
import torch.nn as nn

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
