"""The one timing routine, shared by the eager and torch.compile baselines and the candidate.

cuda: per call a device-wide synchronize, an L2 flush (writing a buffer twice the L2's size), a
second synchronize, then CUDA events on the current stream around the call and a device-wide
synchronize after it; the host clock brackets events and call (`wall_ms`). cpu: the monotonic
host clock (`time.perf_counter_ns`) around the call, reported as both series. Calls rotate
through the input sets (call i uses set i mod k). Raw times only: statistics are computed by
the parent.

The functions used are captured when this module is imported (before any candidate runs);
`timer_identities` / `changed_timers` tell whether anyone replaced them since.
"""

import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

DEFAULT_L2_BYTES = 128 * 1024 * 1024

_perf_counter_ns = time.perf_counter_ns
_synchronize = torch.cuda.synchronize
_Event = torch.cuda.Event
_event_record = torch.cuda.Event.record
_event_elapsed_time = torch.cuda.Event.elapsed_time
_zero = torch.Tensor.zero_
_empty = torch.empty


@dataclass
class TimedCalls:
    """Per-call times in ms, in call order (warm-up calls excluded)."""

    times_ms: List[float] = field(default_factory=list)
    wall_ms: List[float] = field(default_factory=list)


_OWN_NAMES = ("time_calls", "_perf_counter_ns", "_synchronize", "_Event", "_event_record",
              "_event_elapsed_time", "_zero", "_empty")


def _targets() -> Dict[str, Any]:
    module = sys.modules[__name__]
    return {
        "time.perf_counter_ns": time.perf_counter_ns,
        "time.perf_counter": time.perf_counter,
        "torch.cuda.synchronize": torch.cuda.synchronize,
        "torch.cuda.Event": torch.cuda.Event,
        "torch.cuda.Event.record": torch.cuda.Event.record,
        "torch.cuda.Event.elapsed_time": torch.cuda.Event.elapsed_time,
        "torch.Tensor.zero_": torch.Tensor.zero_,
        "torch.save": torch.save,
        "kforge_worker.outputs.save": getattr(sys.modules.get("kforge_worker.outputs"), "save", None),
        "kforge_worker.output_file.write": getattr(sys.modules.get("kforge_worker.output_file"), "write", None),
        "kforge_worker.inputs.input_digest": getattr(sys.modules.get("kforge_worker.inputs"), "input_digest", None),
        "json.dumps": json.dumps,
        "os.write": os.write,
        **{f"kforge_worker.timing.{name}": getattr(module, name, None) for name in _OWN_NAMES},
    }


def timer_identities() -> Dict[str, Any]:
    """A snapshot of the timing and channel functions (the objects themselves)."""
    return _targets()


def changed_timers(snapshot: Dict[str, Any]) -> List[str]:
    """Names whose object is no longer the one in `snapshot`."""
    current = _targets()
    return sorted(name for name, target in snapshot.items() if current.get(name) is not target)


def bound_calls(sets: Sequence[Tuple[Callable, Sequence[Any]]]) -> List[Callable[[], Any]]:
    """One zero-argument call per (model, inputs) set: `model(*inputs)`."""

    def bind(model, inputs):
        def call():
            return model(*inputs)
        return call

    return [bind(model, inputs) for model, inputs in sets]


Hook = Optional[Callable[..., None]]


def time_calls(calls: Sequence[Callable[[], Any]], warmup_trials: int, perf_trials: int,
               device: torch.device, l2_bytes: Optional[int] = None, *,
               prepare: Hook = None, after: Hook = None) -> TimedCalls:
    """Times `perf_trials` calls after `warmup_trials` untimed ones; `calls[i % len(calls)]` is
    warm-up call i and timed call i.

    `prepare(phase, i)` runs before each call and its device-wide synchronize, outside the timed
    region (`phase` is "warmup" or "timed"); `after(phase, i, output)` sees each call's output
    after the closing synchronize, outside the timed region. Autograd is the caller's to disable
    (around this call, not inside it). `l2_bytes` sizes the flush buffer on cuda
    (DEFAULT_L2_BYTES when unknown).
    """
    count = len(calls)
    is_cuda = device.type == "cuda"
    for index in range(warmup_trials):
        if prepare is not None:
            prepare("warmup", index)
        output = calls[index % count]()
        if is_cuda:
            _synchronize(device)
        if after is not None:
            after("warmup", index, output)
        del output
    result = TimedCalls()
    if is_cuda:
        flush = _empty(2 * (l2_bytes or DEFAULT_L2_BYTES), dtype=torch.uint8, device=device)
        start, end = _Event(enable_timing=True), _Event(enable_timing=True)
    for index in range(perf_trials):
        call = calls[index % count]
        if prepare is not None:
            prepare("timed", index)
        if is_cuda:
            _synchronize(device)
            _zero(flush)
            _synchronize(device)
            wall_start = _perf_counter_ns()
            _event_record(start)
            output = call()
            _event_record(end)
            _synchronize(device)
            wall_ms = (_perf_counter_ns() - wall_start) / 1e6
            result.times_ms.append(float(_event_elapsed_time(start, end)))
        else:
            wall_start = _perf_counter_ns()
            output = call()
            wall_ms = (_perf_counter_ns() - wall_start) / 1e6
            result.times_ms.append(wall_ms)
        result.wall_ms.append(wall_ms)
        if after is not None:
            after("timed", index, output)
        del output
    return result
