"""The one timing routine, shared by the eager and torch.compile baselines and the candidate
(docs/timing.md).

Longer than the limit: the routine and every function it captures at import are one module, whose
names the guard's watch list (TIMER_TARGETS) reads from its globals; split, the clocks would be
captured in several modules, each a binding more for a candidate to rebind and for the watch to list.

cuda, per timed call: a device-wide synchronize (the refill before it is done), an event marking
the hold's start, the **hold** (a spin kernel, `torch.cuda._sleep`, sized to the host's launch time
of a call), the L2 flush (a buffer twice the L2's size written), the start event recorded right
behind it on the same stream with no synchronize between (so the host launches the call while the
device is still holding and flushing: its launch latency is hidden, not timed), the call, the end
event; then the host waits for the end event alone and reads its clock, synchronizes the whole
device and reads it again. Per call that gives

- `times_ms`: the events' time, start to end: the device time of the call on the current stream;
- `wall_ms`: host-inclusive time: from the host starting the call (or from the flush's end, when
  the hold and flush were still running then) to the device-wide synchronize's return, and never
  less than the host's own time in the call;
- `gap_ms`: from the end event's completion, seen by the host, to the device-wide synchronize's
  return: work still running on another stream after the current stream finished (`side-stream`).

Warm-up calls on cuda have no hold and no flush: the call, an end event, the host's wait for it,
the device-wide synchronize; `warmup_gap_ms` is that gap. The hold gives work a call launches on
another stream a head start (that stream does not wait for the spin kernel), so a side stream
shorter than the hold has finished before the current stream does and leaves no gap in a timed
call (seen on the H200, 2026-12-05: tests/adversarial/cuda/c03 passed the timed calls' rule); in a
warm-up call it starts with the call's own work, as it did before the hold existed.

The hold is what the flush alone cannot do for a call whose launch takes the host longer than the
flush takes the device (a torch.compile wrapper, a forward of many small operators, a loaded host):
without it the device waits for the host between the start event and the call's first kernel, and
that wait, host time that moves with the machine's load, lands in the device time. Its length is
the host's launch time of a warm-up call times HOLD_FACTOR; a timed call whose launch still
outran the hold and flush counts as `exposed` and lengthens the hold for the calls after it.

cpu: the monotonic host clock (`time.perf_counter_ns`) around the call, in both series; no gap.

Calls rotate through the given zero-argument calls. Raw times only: statistics are computed by
the parent. The functions used are captured when this module is imported (before any candidate
runs); TIMER_TARGETS names them for the guard, which tells whether anyone replaced them since
(integrity.py, which also watches their code objects and every binding of the worker's modules).
"""

import json  # noqa: F401 (json.dumps: read through this module by the guard, TIMER_TARGETS)
import os  # noqa: F401 (os.write: read through this module by the guard, TIMER_TARGETS)
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

DEFAULT_L2_BYTES = 128 * 1024 * 1024
#: The hold lasts this many times the host's launch time of a call, within [HOLD_MIN_MS, HOLD_MAX_MS].
HOLD_FACTOR = 2.0
HOLD_MIN_MS = 0.02
HOLD_MAX_MS = 5.0
#: Cycles of the spin kernel timed once per routine to turn milliseconds into cycles.
CALIBRATION_CYCLES = 1_000_000
#: Most warm-up calls a warm-up by time makes (docs/worker-protocol.md; the parent's
#: WARMUP_CALL_LIMIT, src/eval/timing/timing-budget.ts).
WARMUP_CALL_LIMIT = 1000

_perf_counter_ns = time.perf_counter_ns
_synchronize = torch.cuda.synchronize
_Event = torch.cuda.Event
_event_record = torch.cuda.Event.record
_event_synchronize = torch.cuda.Event.synchronize
_event_elapsed_time = torch.cuda.Event.elapsed_time
_zero = torch.Tensor.zero_
_empty = torch.empty
_sleep = getattr(torch.cuda, "_sleep", None)


@dataclass
class TimingOptions:
    """Knobs of the routine for repeatability studies (bench/gpu/timing_record.py); the defaults are
    what evaluations use.

    `flush`: flush the L2 before each timed call (cuda). `hold`: keep the device busy with a spin
    kernel ahead of the flush while the host launches the call (cuda). `warmup_min_ms`: keep
    warming up (past `warmup_trials` when that is at least one, never past `warmup_limit` calls)
    until this much host time has passed, so that GPU clocks and power settle (the reference's
    baselines take it from the request's `warmup_ms`). `order`: `rotate` deals calls round-robin
    over the call list; `blocked` gives each entry its share of consecutive calls.
    """

    flush: bool = True
    hold: bool = True
    warmup_min_ms: float = 0.0
    warmup_limit: int = WARMUP_CALL_LIMIT
    order: str = "rotate"


@dataclass
class TimedCalls:
    """Per-call times in ms, in call order (warm-up calls excluded); on cuda, the hold the last
    call had (ms; 0 without one) and how many timed calls launched slower than their hold and
    flush lasted (the device may have waited for the host inside the timed region)."""

    times_ms: List[float] = field(default_factory=list)
    wall_ms: List[float] = field(default_factory=list)
    gap_ms: List[float] = field(default_factory=list)
    #: cuda: each warm-up call's gap, with no hold ahead of it (see the module docs).
    warmup_gap_ms: List[float] = field(default_factory=list)
    warmup_calls: int = 0
    hold_ms: float = 0.0
    exposed_calls: int = 0

    def figures(self, device) -> Dict[str, Any]:
        """The fields both the candidate's `timing` and a baseline report: the times, the wall
        times and the warm-up calls, and on cuda the hold and the exposed calls."""
        figures: Dict[str, Any] = {
            "times_ms": self.times_ms,
            "wall_ms": self.wall_ms,
            "warmup_calls": self.warmup_calls,
        }
        if device.type == "cuda":
            figures.update(hold_ms=self.hold_ms, exposed_calls=self.exposed_calls)
        return figures


_OWN_NAMES = (
    "time_calls",
    "time_batch",
    "_timed_cuda_call",
    "_perf_counter_ns",
    "_synchronize",
    "_Event",
    "_event_record",
    "_event_synchronize",
    "_event_elapsed_time",
    "_zero",
    "_empty",
    "_sleep",
)


def _watch_list() -> Tuple[Tuple[str, Any, Tuple[str, ...], bool], ...]:
    """TIMER_TARGETS: (name, root, attributes, lenient) each, read by the guard (integrity.py).
    A module root is this module (its globals: `torch` here is the one these functions use), read
    strictly (`torch.cuda._sleep` may be absent); a name root is looked up in sys.modules when
    read, with absent attributes as None (`lenient`: the module may be absent too)."""
    module = sys.modules[__name__]
    globals_of = [
        ("time.perf_counter_ns", ("time", "perf_counter_ns")),
        ("time.perf_counter", ("time", "perf_counter")),
        ("torch.cuda.synchronize", ("torch", "cuda", "synchronize")),
        ("torch.cuda.Event", ("torch", "cuda", "Event")),
        ("torch.cuda.Event.record", ("torch", "cuda", "Event", "record")),
        ("torch.cuda.Event.synchronize", ("torch", "cuda", "Event", "synchronize")),
        ("torch.cuda.Event.elapsed_time", ("torch", "cuda", "Event", "elapsed_time")),
        ("torch.Tensor.zero_", ("torch", "Tensor", "zero_")),
        ("torch.cuda._sleep", ("torch", "cuda", "_sleep")),
        ("torch.save", ("torch", "save")),
    ]
    in_modules = [
        ("kforge_worker.protocol.outputs", ("flatten",)),
        ("kforge_worker.protocol.output_wire", ("write_tensor",)),
        ("kforge_worker.protocol.output_wire", ("header_of",)),
        ("kforge_worker.protocol.handover", ("Handover", "hand_over")),
        ("kforge_worker.guard.input_digest", ("input_digest",)),
    ]
    return (
        *((name, module, path, name == "torch.cuda._sleep") for name, path in globals_of),
        *((".".join((where, *path)), where, path, True) for where, path in in_modules),
        ("json.dumps", module, ("json", "dumps"), False),
        ("os.write", module, ("os", "write"), False),
        *((f"{__name__}.{name}", __name__, (name,), False) for name in _OWN_NAMES),
    )


#: The timing and channel functions, named one by one: the guard takes their objects when the
#: role starts and tells at each stage's end which were replaced since (integrity.py).
TIMER_TARGETS = _watch_list()


def warmup_call_limit(warmup_trials: int, warmup_ms: float) -> int:
    """The most warm-up calls a request allows: `warmup_trials`, or with a warm-up by time (and at
    least one warm-up call asked for) WARMUP_CALL_LIMIT when that is more."""
    if warmup_trials < 1 or warmup_ms <= 0:
        return warmup_trials
    return max(warmup_trials, WARMUP_CALL_LIMIT)


def bound_calls(sets: Sequence[Tuple[Callable, Sequence[Any]]]) -> List[Callable[[], Any]]:
    """One zero-argument call per (model, inputs) set: `model(*inputs)`."""

    def bind(model, inputs):
        def call():
            return model(*inputs)

        return call

    return [bind(model, inputs) for model, inputs in sets]


def call_order(index: int, count: int, total: int, order: str) -> int:
    """Which of `count` calls call `index` of `total` uses: round-robin (`rotate`) or in blocks of
    consecutive calls per entry (`blocked`)."""
    if order == "blocked" and total > 0:
        return min(count - 1, index * count // total)
    return index % count


Hook = Optional[Callable[..., Any]]


@dataclass
class _Hold:
    """The hold's length in spin cycles and in ms, and the cycles per ms of this device (None: no
    hold)."""

    cycles_per_ms: Optional[float]
    ms: float = 0.0

    @property
    def cycles(self) -> int:
        return int(self.ms * self.cycles_per_ms) if self.cycles_per_ms and self.ms > 0 else 0

    def cover(self, launch_ms: float) -> None:
        """Lengthens the hold to cover a launch of `launch_ms` on the host (never shortens it)."""
        if self.cycles_per_ms:
            self.ms = max(self.ms, min(HOLD_MAX_MS, max(HOLD_MIN_MS, HOLD_FACTOR * launch_ms)))


def _calibrated_hold(device: torch.device, launch_ms: List[float]) -> _Hold:
    """The hold for calls whose warm-up launches took `launch_ms` on the host: the spin kernel timed
    twice (the faster count of cycles per ms kept, the first may load the kernel), then sized to the
    median launch after the first (which may have built or loaded something)."""
    if _sleep is None:
        return _Hold(None)
    rates = []
    for _ in range(2):
        before, after = _Event(enable_timing=True), _Event(enable_timing=True)
        _synchronize(device)
        _event_record(before)
        _sleep(CALIBRATION_CYCLES)
        _event_record(after)
        _event_synchronize(after)
        elapsed = float(_event_elapsed_time(before, after))
        if elapsed > 0:
            rates.append(CALIBRATION_CYCLES / elapsed)
    hold = _Hold(max(rates) if rates else None)
    usual = launch_ms[1:] or launch_ms
    hold.cover(sorted(usual)[len(usual) // 2] if usual else 0.0)
    return hold


def _timed_cuda_call(
    call: Callable[[], Any],
    device: torch.device,
    flush: Optional[torch.Tensor],
    events: Tuple[Any, Any, Any],
    hold_cycles: int = 0,
) -> Tuple[Any, float, float, float, float, bool]:
    """One timed call on cuda: (output, event ms, wall ms, gap ms, launch ms, exposed). See the
    module's docstring; `launch ms` is the host's time from the call's start to its end event's
    record, `exposed` whether the host was still launching when the hold and flush had ended."""
    hold_start, start, end = events
    _synchronize(device)
    hold_host_ns = _perf_counter_ns()
    _event_record(hold_start)
    if hold_cycles > 0:
        _sleep(hold_cycles)
    if flush is not None:
        _zero(flush)
    _event_record(start)
    call_host_ns = _perf_counter_ns()
    output = call()
    _event_record(end)
    launched_host_ns = _perf_counter_ns()
    _event_synchronize(end)
    end_host_ns = _perf_counter_ns()
    _synchronize(device)
    done_host_ns = _perf_counter_ns()
    busy_until_ns = hold_host_ns + int(float(_event_elapsed_time(hold_start, start)) * 1e6)
    launch_ms = (launched_host_ns - call_host_ns) / 1e6
    # Host-inclusive: from the call's start, less what the hold and flush still had to run then;
    # never less than the host's own time in the call (work done on the host while the device held).
    wall_ms = max(launch_ms, (done_host_ns - max(call_host_ns, busy_until_ns)) / 1e6)
    return (
        output,
        float(_event_elapsed_time(start, end)),
        max(0.0, wall_ms),
        (done_host_ns - end_host_ns) / 1e6,
        launch_ms,
        launched_host_ns > busy_until_ns,
    )


def _warmup(
    calls,
    warmup_trials: int,
    device,
    prepare: Hook,
    after: Hook,
    proceed: Hook,
    options: TimingOptions,
    launch_ms: Optional[List[float]] = None,
    gap_ms: Optional[List[float]] = None,
) -> int:
    """Untimed calls; returns how many ran, and appends each call's host time (before its
    synchronize: on cuda, its launch) to `launch_ms` and on cuda its gap (from its end event's
    completion to the device-wide synchronize's return) to `gap_ms`. `proceed` may end them early
    (never before one call). With `options.warmup_min_ms` and at least one warm-up call asked
    for, calls go on past `warmup_trials` until that much host time has passed since the first
    began (`options.warmup_limit` calls at most)."""
    count, is_cuda = len(calls), device.type == "cuda"
    started_ns = _perf_counter_ns()
    index = 0
    while index < warmup_trials or (
        warmup_trials > 0
        and index < options.warmup_limit
        and (_perf_counter_ns() - started_ns) / 1e6 < options.warmup_min_ms
    ):
        if prepare is not None:
            prepare("warmup", index)
        call_ns = _perf_counter_ns()
        output = calls[call_order(index, count, max(warmup_trials, 1), options.order)]()
        if launch_ms is not None:
            launch_ms.append((_perf_counter_ns() - call_ns) / 1e6)
        if is_cuda:
            end = _Event(enable_timing=True)
            _event_record(end)
            _event_synchronize(end)
            stream_done_ns = _perf_counter_ns()
            _synchronize(device)
            if gap_ms is not None:
                gap_ms.append((_perf_counter_ns() - stream_done_ns) / 1e6)
        if after is not None:
            after("warmup", index, output)
        go_on = proceed is None or proceed("warmup", index, output) is not False
        del output
        index += 1
        if not go_on:
            break
    return index


# Longer than the limit: the timed loop is one function, so that on the host clock nothing of ours
# but the call runs between the two reads of the clock (no helper a candidate could patch or slow).
def time_calls(
    calls: Sequence[Callable[[], Any]],
    warmup_trials: int,
    perf_trials: int,
    device: torch.device,
    l2_bytes: Optional[int] = None,
    *,
    prepare: Hook = None,
    after: Hook = None,
    proceed: Hook = None,
    options: Optional[TimingOptions] = None,
) -> TimedCalls:
    """Times up to `perf_trials` calls after up to `warmup_trials` untimed ones; `calls[i % len(calls)]`
    is warm-up call i and timed call i (with `options.order` = rotate).

    `prepare(phase, i)` runs before each call, outside the timed region (`phase` is "warmup" or
    "timed"); `after(phase, i, output)` sees each call's output after the closing synchronize,
    outside the timed region; `proceed(phase, i, output)` runs after `after`, and returning False
    ends the phase after this call (a time budget, or the parent's decision). Autograd is the
    caller's to disable (around this call, not inside it). `l2_bytes` sizes the flush buffer on
    cuda (DEFAULT_L2_BYTES when unknown).
    """
    options = options or TimingOptions()
    count = len(calls)
    is_cuda = device.type == "cuda"
    result = TimedCalls()
    launch_ms: List[float] = []
    result.warmup_calls = _warmup(
        calls, warmup_trials, device, prepare, after, proceed, options, launch_ms, result.warmup_gap_ms
    )
    flush, events, hold = None, None, _Hold(None)
    if is_cuda:
        if options.flush:
            flush = _empty(2 * (l2_bytes or DEFAULT_L2_BYTES), dtype=torch.uint8, device=device)
        events = tuple(_Event(enable_timing=True) for _ in range(3))
        if options.hold:
            hold = _calibrated_hold(device, launch_ms)
    for index in range(perf_trials):
        call = calls[call_order(index, count, perf_trials, options.order)]
        if prepare is not None:
            prepare("timed", index)
        if is_cuda:
            output, device_ms, wall_ms, gap_ms, launched_ms, exposed = _timed_cuda_call(
                call, device, flush, events, hold.cycles
            )
            if exposed:
                result.exposed_calls += 1
                hold.cover(launched_ms)
            result.hold_ms = hold.ms if hold.cycles else 0.0
        else:
            started_ns = _perf_counter_ns()
            output = call()
            wall_ms = device_ms = (_perf_counter_ns() - started_ns) / 1e6
            gap_ms = 0.0
        result.times_ms.append(device_ms)
        result.wall_ms.append(wall_ms)
        result.gap_ms.append(gap_ms)
        if after is not None:
            after("timed", index, output)
        go_on = proceed is None or proceed("timed", index, output) is not False
        del output
        if not go_on:
            break
    return result


def time_batch(
    calls: Sequence[Callable[[], Any]], device: torch.device, keep: Optional[int] = None
) -> Tuple[List[Any], float]:
    """Runs every call back to back (no synchronize between them, no flush), then one device-wide
    synchronize; returns the outputs and the host time of the whole, in ms. In the candidate's
    process that time is not believed: the parent times the batch with its own clock.

    With `keep`, only the first `keep` outputs are held (and returned); a later call's output is
    dropped as soon as it returns, so a long batch of large outputs holds `keep` + 1 of them at
    most, not one per call (the reference's baselines: eight calls of a 6 GiB output would hold
    48 GiB)."""
    started_ns = _perf_counter_ns()
    if keep is None:
        outputs = [call() for call in calls]
    else:
        outputs = []
        for call in calls:
            output = call()
            if len(outputs) < keep:
                outputs.append(output)
            output = None
    if device.type == "cuda":
        _synchronize(device)
    return outputs, (_perf_counter_ns() - started_ns) / 1e6
