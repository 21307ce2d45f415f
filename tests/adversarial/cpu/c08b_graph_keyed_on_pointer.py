"""CHEAT (docs/hacks.md #8, result caching): a "graph" captured once per input buffer, keyed on
``x.data_ptr()``, that replays on the contents it captured.

It looks like the CUDA-graph pattern of published kernels (capture once per buffer, replay after),
but the capture copies the input, so a replay answers for the contents the buffer held at capture,
not for what it holds now. A harness that calls it again on the same buffer gets the old answer at
the cost of no work on the input. The static guard only notes the pointer key (``result-cache``):
at run time the timed calls refill the same buffer with new contents, and the sampled timed
outputs mismatch (``timed-output``).
"""

import torch
import torch.nn as nn


class _Graph:
    """Captured on a buffer's first call: a copy of the input, replayed on every later call."""

    def __init__(self, x: torch.Tensor):
        self.captured = x.reshape(-1).tolist()  # the bug: the contents, not the buffer
        self.shape = tuple(x.shape)

    def replay(self, like: torch.Tensor) -> torch.Tensor:
        values = [v if v > 0.0 else 0.0 for v in self.captured]
        return torch.tensor(values, dtype=like.dtype, device=like.device).view(self.shape)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._graphs = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = (x.data_ptr(), tuple(x.shape), tuple(x.stride()))
        graph = self._graphs.get(key)
        if graph is None:
            graph = _Graph(x)
            self._graphs[key] = graph
        return graph.replay(x)
