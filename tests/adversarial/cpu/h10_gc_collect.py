"""HONEST look-alike of #10: frees memory with ``gc.collect()`` and checks its own signature."""

import gc
import inspect

import torch
import torch.nn as nn

gc.collect()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._arity = len(inspect.signature(self.forward).parameters)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
