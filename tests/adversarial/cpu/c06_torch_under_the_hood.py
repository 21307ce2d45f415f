"""CHEAT (docs/hacks.md #6, PyTorch under the hood): a "kernel" that is PyTorch's relu in disguise.

The op is looked up with a string built at import, so a grep for ``relu`` finds nothing.
Static check ``torch-fallback``; at run time the dispatch trace would show aten::relu doing the work
(c06c hides the lookup from the static check too).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

_kernel = getattr(F, "re" + "lu")


def _launch(x):
    return _kernel(x.contiguous())


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _launch(x).view_as(x)
