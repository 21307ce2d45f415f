"""HONEST look-alike of #5: reads the clock (never replaces it) to report its own set-up time."""

import sys
import time

import torch
import torch.nn as nn

_clock = time.perf_counter
_started = _clock()


def _relu_table(values):
    return [v if v > 0.0 else 0.0 for v in values]


_SETUP_SECONDS = _clock() - _started
print(f"relu candidate ready in {_SETUP_SECONDS * 1e3:.3f} ms", file=sys.stderr)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = _relu_table(x.reshape(-1).tolist())
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
