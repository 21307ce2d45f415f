"""CHEAT (docs/hacks.md #17, slowing the baseline): switches torch to deterministic algorithms and
to flushing denormals in its constructor, next to an innocent seed.

In a process that also timed the baseline, every PyTorch operator after construction would run
its deterministic (often slower) variant, and the reference's arithmetic on tiny values would
change. The static guard only notes these calls (``global-state``): the run-time snapshot of
torch's global state, compared after the construction, sees both switches changed and rejects.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)  # harmless: the worker reseeds before every call
        torch.use_deterministic_algorithms(True)
        torch.set_flush_denormal(True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
