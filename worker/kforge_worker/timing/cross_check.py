"""`--cross-check` (docs/timing.md): the candidate timed a second way, in the same process, right
after the per-call loop, on the same live inputs (not refilled: this checks the timing method,
not the candidate's honesty; the per-call loop and the trusted batches do that).

cuda: the way `triton.testing.do_bench` times, back to back with no synchronize between calls:
per call the L2 flush, a start event, the call, an end event; one device-wide synchronize at the
end, each output dropped as it returns. cpu: groups of calls back to back, the host clock read
only around each group (the per-call loop reads it around every call); each group's mean is one
figure.
"""

import time
from typing import Any, Callable, List, Optional, Sequence

import torch

from .timing import DEFAULT_L2_BYTES, call_order

CPU_GROUPS = 5
_perf_counter_ns = time.perf_counter_ns


def _events(calls: Sequence[Callable[[], Any]], count: int, device, l2_bytes: Optional[int]) -> List[float]:
    flush = torch.empty(2 * (l2_bytes or DEFAULT_L2_BYTES), dtype=torch.uint8, device=device)
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(count)]
    torch.cuda.synchronize(device)
    for index, (start, end) in enumerate(pairs):
        flush.zero_()
        start.record()
        # The output is dropped at once, as do_bench does: its block goes back to the caching
        # allocator for the next call. Kept alive, every call allocated afresh (cudaMalloc on the
        # host while the device waited between the events): on 2026-12-05 three runs of one kernel
        # read 0.24, 0.30 and 0.45 ms this way.
        calls[call_order(index, len(calls), count, "rotate")]()
        end.record()
    torch.cuda.synchronize(device)
    return [float(start.elapsed_time(end)) for start, end in pairs]


def _host_groups(calls: Sequence[Callable[[], Any]], count: int) -> List[float]:
    per_group = max(1, count // CPU_GROUPS)
    figures = []
    for group in range(CPU_GROUPS):
        started_ns = _perf_counter_ns()
        for index in range(per_group):
            calls[call_order(group * per_group + index, len(calls), count, "rotate")]()
        figures.append((_perf_counter_ns() - started_ns) / 1e6 / per_group)
    return figures


def cross_check(calls: Sequence[Callable[[], Any]], count: int, device: torch.device, l2_bytes: Optional[int]) -> dict:
    """`{"method", "times_ms"}`: the second method's per-call figures."""
    count = max(1, count)
    if device.type == "cuda":
        return {"method": "back-to-back-events", "times_ms": _events(calls, count, device, l2_bytes)}
    return {"method": "back-to-back-host-clock", "times_ms": _host_groups(calls, count)}
