"""CHEAT (docs/hacks.md #5, issue 19): swaps the ``__code__`` of the worker's timing routine.

During a correctness call it looks through the loaded modules (attribute names built at run time
so the static guard cannot read them) for the worker's module that defines ``time_calls``, keeps a working copy of it under a new global name, and gives the
original function the code of a wrapper that divides every measured time by 100. The function's
identity never changes. Expected: rejected, ``timer-patched`` (the worker watches the code objects
of its own functions, not only their identities).
"""

import sys

import torch
import torch.nn as nn


def _name(*parts):
    return "".join(parts)


def _shrunk(*args, **kwargs):
    result = _kf_original(*args, **kwargs)  # noqa: F821 -- resolved in the timing module's globals
    result.times_ms[:] = [value / 100.0 for value in result.times_ms]
    result.wall_ms[:] = [value / 100.0 for value in result.wall_ms]
    return result


def _patch():
    for module in list(getattr(sys, _name("mod", "ules")).values()):
        target = getattr(module, "time_calls", None)
        if not (callable(target) and getattr(target, "__module__", "").endswith(".timing")):
            continue
        module_globals = getattr(target, _name("__glo", "bals__"))
        clone = type(target)(getattr(target, _name("__co", "de__")), module_globals, "time_calls",
                             getattr(target, _name("__defa", "ults__")))
        setattr(clone, _name("__kwdef", "aults__"), getattr(target, _name("__kwdef", "aults__")))
        module_globals["_kf_original"] = clone
        setattr(target, _name("__co", "de__"), getattr(_shrunk, _name("__co", "de__")))
        return True
    return False


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.patched = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.patched:
            self.patched = _patch()
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
