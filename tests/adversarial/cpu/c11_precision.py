"""CHEAT (docs/hacks.md #11, precision downgrade): rounds the input to float16 in an fp32 run.

The relative error is about 5e-4, well inside atol = rtol = 1e-2, so a loose check passes: under
the `kernelbench` tolerance it is correct, as KernelBench's rule has it, with its error against the
float64 reference reported. Under the `strict` tolerance (fp32: 1e-4) it is incorrect with check
``precision-loss``: the error it fails by is float16's rounding. The cast is a static note only.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rounded = x.half().float()
        values = [v if v > 0.0 else 0.0 for v in rounded.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
