"""HONEST look-alike of #8: a "graph" captured once per input buffer, keyed on ``x.data_ptr()``,
that reads the buffer's current contents on every replay.

This is what a CUDA graph captured on a static input buffer does: the plan (here, the row blocks
to process) is made once per buffer, and every replay computes from whatever the buffer holds now.
The static guard notes the pointer key (``result-cache``); the timed calls' new contents in the same
buffer show the answers are fresh.
"""

import torch
import torch.nn as nn


class _Graph:
    """Captured on a buffer's first call: the buffer itself and a launch plan, never its contents."""

    def __init__(self, x: torch.Tensor):
        self.buffer = x
        rows = x.shape[0]
        self.blocks = [(start, min(start + 2, rows)) for start in range(0, rows, 2)]

    def replay(self) -> torch.Tensor:
        rows = self.buffer.tolist()  # the buffer's contents now
        out = []
        for start, stop in self.blocks:
            out.extend([v if v > 0.0 else 0.0 for v in row] for row in rows[start:stop])
        return torch.tensor(out, dtype=self.buffer.dtype, device=self.buffer.device)


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
        return graph.replay()
