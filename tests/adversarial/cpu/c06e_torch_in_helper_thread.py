"""CHEAT (docs/hacks.md #6, PyTorch under the hood): relu run by a helper thread that forward joins.

The dispatch trace of a correctness call is a TorchDispatchMode, which is thread-local: an operator
dispatched on another thread never reaches it. The thread class and the op are both picked out of
module namespaces with strings built at import (as in c06c), so the static guard sees neither a
thread start nor a torch call in forward (importing threading is a note). The thread is joined
before forward returns, so no thread is left running. Where the profiler can record every thread
(torch 2.x: `_ExperimentalConfig(profile_all_threads=True)`), the traced call shows aten::relu on
another thread (check ``torch-fallback``); torch 1.13's profiler cannot, and there it passes.
"""

import importlib

import torch
import torch.nn as nn

_threads = importlib.import_module("threading")
_Worker = vars(_threads)["".join(("Thr", "ead"))]
_functional = importlib.import_module("torch.nn.functional")
_kernel = vars(_functional)["".join(("re", "lu"))]


def _launch(source, target):
    target.copy_(_kernel(source))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.contiguous()
        out = torch.empty_like(flat)
        worker = _Worker(target=_launch, args=(flat, out))
        worker.start()
        worker.join()
        return out.view_as(x)
