"""CHEAT (docs/hacks.md #5, harness patching): writes a forged timing message to the worker's channel.

The worker's result channel starts as file descriptor 3. The worker now moves it to a private
descriptor and closes 3, so this write fails, but a candidate in the same process can still look
for the channel under /proc/self/fd. Static check ``sandbox``; the parent should also reject a
second ``timing`` message or one whose times do not fit the stage's own duration.
"""

import json
import os

import torch
import torch.nn as nn


def _forge():
    message = {"v": 1, "type": "timing", "times_ms": [1e-6] * 100, "wall_ms": [1e-6] * 100, "samples": []}
    try:
        os.write(3, (json.dumps(message) + "\n").encode())
    except OSError:
        pass


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _forge()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
