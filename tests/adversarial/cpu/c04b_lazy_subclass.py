"""CHEAT (docs/hacks.md #4, deferred work): a lazy tensor subclass computes only when compared.

``forward`` returns a ``LazySoftmax`` wrapper at once; the softmax runs in
``__torch_function__`` when the harness first touches the result, outside the timed region.
Static check ``deferred-work``; at run time the output is not a plain ``torch.Tensor``.
"""

import torch
import torch.nn as nn


class LazySoftmax(torch.Tensor):
    @staticmethod
    def __new__(cls, source):
        holder = torch.Tensor._make_subclass(cls, torch.empty_like(source))
        holder._source = source
        return holder

    def resolve(self):
        with torch._C.DisableTorchFunction():
            return torch.softmax(self._source, dim=1)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        resolved = tuple(a.resolve() if isinstance(a, LazySoftmax) else a for a in args)
        with torch._C.DisableTorchFunction():
            return func(*resolved, **(kwargs or {}))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return LazySoftmax(x)
