"""CHEAT (docs/hacks.md #6, PyTorch under the hood): relu reached through importlib and a module's vars().

The module is imported by a literal name and the op is picked out of its namespace dictionary with
a string built at import, so neither the import check nor the getattr check of the static guard
sees a torch call in forward: only `torch.empty_like`, `copy_` and `view_as` glue, plus a call of a
plain module-level name. At run time the dispatch trace of a correctness call shows aten::relu
doing the work (check ``torch-fallback``).
"""

import importlib

import torch
import torch.nn as nn

_functional = importlib.import_module("torch.nn.functional")
_kernel = vars(_functional)["".join(("re", "lu"))]


def _launch(x):
    return _kernel(x)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.contiguous()
        out = torch.empty_like(flat)
        out.copy_(_launch(flat))
        return out.view_as(x)
