"""CHEAT (docs/hacks.md #5, issue 19): writes a forged ``timing`` message on the worker's channel
descriptor, found in a closure.

In the first timed call it walks the stack to the worker's frames, finds the channel's writer (a
closure), reads the private file descriptor out of its cells and writes a ``timing`` line of its
own with every call at a nanosecond. Expected: rejected, ``timing-tampered`` (the parent answers
every call itself and takes the ``timing`` message only where it asked for it, exactly once).
"""

import json
import os

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


def _forge() -> bool:
    timed, descriptor = False, None
    for frame in _frames():
        names = getattr(frame, _name("f_", "locals"))
        if getattr(frame, _name("f_", "code")).co_name == "time_calls" and "result" in names:
            timed = True
        writer = getattr(names.get("channel"), "send", None)
        for cell in getattr(writer, _name("__clo", "sure__"), None) or ():
            value = getattr(cell, _name("cell_", "contents"))
            if isinstance(value, int) and not isinstance(value, bool) and value > 2:
                descriptor = value
    if not timed or descriptor is None:
        return False
    message = {"v": 1, "type": "timing", "times_ms": [1e-6] * 100, "wall_ms": [1e-6] * 100, "samples": []}
    getattr(os, _name("wri", "te"))(descriptor, (json.dumps(message) + "\n").encode())
    return True


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.forged = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.forged:
            self.forged = _forge()
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
