"""CHEAT (docs/hacks.md #5, issue 19): rebinds the name under which the timing stage imported the
timing routine.

The worker's identity snapshot names ``kforge_worker.timing.timing.time_calls``; the timing stage calls it
through its own module's binding. During a correctness call this candidate walks the stack to a
worker module, reaches the timing stage's module through it, and rebinds its ``time_calls`` to a
wrapper that divides every measured time by 100. Expected: rejected, ``timer-patched`` (every
binding of the worker's modules is watched).
"""

import torch
import torch.nn as nn


def _name(*parts):
    return "".join(parts)


def _frames():
    try:
        raise LookupError("walk")
    except LookupError as error:
        frame = getattr(getattr(error, _name("__trace", "back__")), _name("tb_", "frame"))
    while frame is not None:
        yield frame
        frame = getattr(frame, _name("f_", "back"))


def _wrap(original):
    def shrunk(*args, **kwargs):
        result = original(*args, **kwargs)
        result.times_ms[:] = [value / 100.0 for value in result.times_ms]
        result.wall_ms[:] = [value / 100.0 for value in result.wall_ms]
        return result
    return shrunk


def _patch():
    for frame in _frames():
        namespace = getattr(frame, _name("f_", "globals"))
        run_timing = namespace.get("run_timing")
        if run_timing is not None:
            stage_globals = getattr(run_timing, _name("__glo", "bals__"))
            stage_globals["time_calls"] = _wrap(stage_globals["time_calls"])
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
