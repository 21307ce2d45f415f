"""HONEST look-alike of #6 (threads): its own (Python) kernel runs in a helper thread that forward
joins before returning, writing an ``empty_like`` output through numpy. Forward's thread dispatches
only ``contiguous``/``view``/``empty_like`` glue and the helper thread dispatches nothing, which is
what the dispatch trace and the all-threads profiler see."""

import importlib

import torch
import torch.nn as nn

_threads = importlib.import_module("threading")
_Worker = vars(_threads)["".join(("Thr", "ead"))]


def _relu_into(source, target):
    for index in range(len(source)):
        value = source[index]
        target[index] = value if value > 0.0 else 0.0


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.contiguous().view(-1)
        out = torch.empty_like(flat)
        worker = _Worker(target=_relu_into, args=(flat.numpy(), out.numpy()))
        worker.start()
        worker.join()
        return out.view(x.size(0), x.size(1))
