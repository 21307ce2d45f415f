"""`--cross-check` (docs/timing.md): the candidate timed a second way, in the same process, right
after the per-call loop, on the same live inputs (not refilled: this checks the timing method,
not the candidate's honesty; the per-call loop and the trusted batches do that).

cuda: the way `triton.testing.do_bench` times, back to back with no synchronize between calls:
per call the L2 flush, a start event, the call, an end event; one device-wide synchronize at the
end, each output dropped as it returns. cpu: groups of calls back to back, the host clock read
only around each group (the per-call loop reads it around every call); each group's mean is one
figure.

cuda also: the kernels' own durations (`kernel-durations`), as `ncu`'s gpu__time_duration.sum
gives them: KERNEL_CALLS calls under torch's profiler (CUPTI's activity records: the device's
start and end of every kernel), each after the L2 flush and between two marker kernels of the
worker's own, and per call the sum of the durations of the kernels and copies between its markers.
No launch gap is in it, so the timed calls' median is that or more. Work a call leaves running
past its closing marker is not counted here (the side-stream check is about that).
"""

import os

import time
from typing import Any, Callable, List, Optional, Sequence

import torch

from ..guard.kernel_trace import duration_us, is_device, is_marker, kernels_reason
from .timing import DEFAULT_L2_BYTES, call_order

CPU_GROUPS = 5
#: Calls profiled for `kernel-durations`.
KERNEL_CALLS = 20
_perf_counter_ns = time.perf_counter_ns


def _events(calls: Sequence[Callable[[], Any]], count: int, device, flush: torch.Tensor) -> List[float]:
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


def _start_us(event: Any) -> float:
    try:
        return float(event.time_range.start)
    except AttributeError:
        return 0.0


def _kernel_durations(calls: Sequence[Callable[[], Any]], count: int, device, flush: torch.Tensor) -> dict:
    """`{"method": "kernel-durations", "times_ms"}`, or `{"method", "unavailable"}` saying why not."""
    method = "kernel-durations"
    reason = kernels_reason(device)
    if reason is None and torch.autograd._profiler_enabled():
        reason = "a profiler was already running on the calling thread"
    if reason is not None:
        return {"method": method, "unavailable": reason}
    from torch.profiler import ProfilerActivity, profile

    calls_made = max(1, min(count, KERNEL_CALLS))
    os.environ["TEARDOWN_CUPTI"] = "1"
    torch.cuda.synchronize(device)
    raised = None
    try:
        with profile(activities=[ProfilerActivity.CUDA]) as profiler:
            for index in range(calls_made):
                flush.zero_()
                torch.cuda._sleep(1)
                try:
                    calls[call_order(index, len(calls), calls_made, "rotate")]()
                except BaseException as error:  # the candidate's own: raised below, not a profiler failure
                    raised = error
                    break
                torch.cuda._sleep(1)
                torch.cuda.synchronize(device)
        events = sorted((event for event in profiler.events() if is_device(event)), key=_start_us)
    except Exception as error:  # the profiler's failure is reported, never the candidate's
        if raised is None:
            return {"method": method, "unavailable": f"the profiler failed ({type(error).__name__}: {error})"}
    if raised is not None:
        raise raised
    times, inside, total_us, markers = [], False, 0.0, 0
    for event in events:
        if is_marker(event.name):
            markers += 1
            if inside:
                times.append(total_us / 1000.0)
            inside, total_us = not inside, 0.0
        elif inside:
            total_us += duration_us(event)
    if markers != 2 * calls_made:
        return {
            "method": method,
            "unavailable": f"the profiler recorded {markers} of the {2 * calls_made} marker kernels "
            f"(CUPTI not recording every kernel)",
        }
    return {"method": method, "times_ms": times}


def cross_check(calls: Sequence[Callable[[], Any]], count: int, device: torch.device, l2_bytes: Optional[int]) -> dict:
    """`{"method", "times_ms"}`: the second method's per-call figures; on cuda with `kernels`, the
    kernels' own durations (or why they could not be had)."""
    count = max(1, count)
    if device.type == "cuda":
        flush = torch.empty(2 * (l2_bytes or DEFAULT_L2_BYTES), dtype=torch.uint8, device=device)
        return {
            "method": "back-to-back-events",
            "times_ms": _events(calls, count, device, flush),
            "kernels": _kernel_durations(calls, count, device, flush),
        }
    return {"method": "back-to-back-host-clock", "times_ms": _host_groups(calls, count)}
