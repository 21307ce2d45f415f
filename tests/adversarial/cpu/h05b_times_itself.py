"""HONEST look-alike of issue 19's timing attacks: reads the clocks (never replaces them) to time
its own set-up, looks at a code object of its own and asks ctypes for a type's size, and computes
every call. Expected: correct, with its own times (the trusted bound does not replace them)."""

import ctypes
import sys
import time

import torch
import torch.nn as nn


def _relu_table(values):
    return [v if v > 0.0 else 0.0 for v in values]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        started = time.perf_counter_ns()
        self.kernel_name = _relu_table.__code__.co_name
        self.float_bytes = ctypes.sizeof(ctypes.c_float)
        print(f"{self.kernel_name} ready in {(time.perf_counter_ns() - started) / 1e3:.1f} us "
              f"({self.float_bytes}-byte floats)", file=sys.stderr)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = _relu_table(x.reshape(-1).tolist())
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
