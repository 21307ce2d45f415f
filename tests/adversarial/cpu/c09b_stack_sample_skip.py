"""CHEAT (docs/hacks.md #9, issue 19): reads the timing loop's locals from the stack to skip the calls
whose outputs will not be checked.

In every call it walks up the stack (attribute names built at run time) to the frame of the
worker's timing loop. In a timed call it looks through the frames' locals for the set of sampled
calls and computes only those; every other timed call returns the previous answer at once, which
makes the timed calls look fast. Where the worker keeps such a set, every sampled output is right
and the verdict would be `correct`. Expected: rejected, ``timed-output`` (no list of sampled
calls exists in the candidate's process any more: the parent decides after each call returned
which output to keep, so the skipped calls are the ones it keeps).
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


def _timed_call():
    """(index of the timed call, sampled calls found or None), or None outside the timed calls."""
    index, sampled = None, None
    for frame in _frames():
        names = getattr(frame, _name("f_", "locals"))
        code = getattr(frame, _name("f_", "code"))
        if index is None and code.co_name == "time_calls" and "result" in names and "index" in names:
            index = names["index"]
        if index is None and code.co_name in ("_warmup", "time_batch"):
            return None
        for value in names.values():
            if isinstance(value, (set, frozenset)) and value and all(isinstance(item, int) for item in value):
                sampled = value
            found = getattr(value, _name("sample", "_calls"), None)
            if isinstance(found, (list, tuple)):
                sampled = set(found)
    return None if index is None else (index, sampled)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.last = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        timed = _timed_call()
        if timed is not None and self.last is not None and self.last.shape == x.shape:
            index, sampled = timed
            if sampled is None or index not in sampled:
                return self.last.clone()
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        self.last = torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
        return self.last.clone()
