"""HONEST look-alike of #18: sets a build knob and keeps a scratch file in its working directory."""

import os

import torch
import torch.nn as nn

os.environ.setdefault("MAX_JOBS", "2")
_SCRATCH = "relu-scratch.txt"


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        with open(_SCRATCH, "w") as handle:
            handle.write("relu candidate scratch\n")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
