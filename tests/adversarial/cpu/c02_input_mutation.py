"""CHEAT (docs/hacks.md #2, input mutation): zeroes its input and returns zeros.

A harness that runs the reference afterwards on the same tensor computes relu(0) = 0 and
agrees. Defence: each model gets its own inputs, and the inputs are hashed after the call
(the dynamic ``input-mutation`` check).
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.zero_()
        return torch.zeros_like(x)
