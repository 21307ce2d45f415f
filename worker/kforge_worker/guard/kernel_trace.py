"""The profiler's record of one untimed call: the GPU kernels it launched (`own-kernel`) and the ATen
operators dispatched on threads other than the caller's (`torch-fallback`).

`profiled_call(call, device, glue)` runs `call()` under `torch.profiler.profile` when there is
something to record, and returns (its result, a :class:`KernelTrace`):

- **kernels** (cuda device, CUPTI usable: `ProfilerActivity.CUDA` in
  `torch.profiler.supported_activities()`): every kernel launched in the process while the call
  ran, from any thread and from CUDA-graph replays (CUPTI traces the device, not a thread), by the
  name the profiler gives it. A marker kernel of the worker's own (`torch.cuda._sleep(1)`,
  `at::cuda::…::spin_kernel`) is launched and synchronized before the call and again after it, so
  a profiler that records no kernels, or stopped recording during the call, is told apart from a
  call that launched none (`kernels_unavailable`); the two markers are not counted. The device is
  synchronized before the profiler stops, so every kernel of the call has finished and is recorded.
- **operators on other threads** (where the profiler has an all-threads mode:
  `torch.profiler._ExperimentalConfig(profile_all_threads=True)`, present in torch 2.11, absent
  in 1.13): the operator calls (`namespace::name`) of every thread but the caller's (the caller's
  are the dispatch trace's, dispatch_trace.py) that run inside no PyTorch operator (so
  `aten::relu` counts, not the `aten::clamp_min` it calls; one inside a `record_function` range or a
  custom operator counts), with their input shapes, as
  :class:`~kforge_worker.guard.dispatch_trace.OperatorCount` entries for torch_fallback.judge. The
  profiler records only input shapes, so each call's result is counted as large as its largest
  input.

Neither (cpu device on a torch without the all-threads mode): the call runs without a profiler.
CUPTI stays attached to the process after a trace unless Kineto tears it down, which slows every
later kernel launch (seen on an H200, torch 2.11, in an exploratory run on 2026-12-03 whose
script was not kept; three processes each: median host time per launch of a small kernel
×1.05–1.49 after a session, ×0.81–0.97 after one with teardown);
`TEARDOWN_CUPTI=1` is set before the trace, so the timed calls later in the process are not
slowed. The first trace of a process starts Kineto: about 4–6 s on that H200.

OS threads that the profiler starts or leaves (counted while the candidate is not running: from
before the profiler starts to after the first marker, and from after the closing marker to after
it stops) are `profiler_threads`, which the guard adds to the `deferred-work` thread baseline.

Any failure of the profiler itself (it will not start, a profiler is already running, its results
do not parse) is `unavailable`, never raised into the candidate's call; the call's own exceptions
propagate with the profiler stopped.

Longer than the limit: this docstring says what a trace holds and why (the code under it is
one profiler session, from its start to reading its events, in about 300 lines); splitting the
event reading off would move names that timing/cross_check.py imports from here.
"""

import os
from collections import Counter
from dataclasses import dataclass, field
from math import prod
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Tuple

import torch

from .deferred_work import os_thread_count
from .dispatch_ops import PYTORCH_NAMESPACES, classify, split_name
from .dispatch_trace import OperatorCount
from .kernel_names import is_copy, qualified_name

CALLER_MARKER = "kforge::guard-call"
MARKER_KERNEL = "spin_kernel"
MARKERS_PER_CALL = 2
_MAX_DEPTH = 64


@dataclass
class KernelLaunch:
    """One kernel (or device copy) of the traced call, for attribution: its name, device time (µs)
    and the PyTorch operators it was launched inside, outermost first (empty: launched outside
    every PyTorch operator — the candidate's own code, or a vendor library it called)."""

    name: str
    duration_us: float
    operators: List[str] = field(default_factory=list)

    def operator(self, traced: FrozenSet[str]) -> Optional[str]:
        """The operator to charge: the outermost whose name the dispatch trace also saw (`traced`:
        names after composite operators decompose, as the reference's are), else the outermost."""
        for name in self.operators:
            if name in traced:
                return name
        return self.operators[0] if self.operators else None


@dataclass
class KernelTrace:
    """What the profiler saw of one call; `kernels` and `other_threads` are None where not recorded,
    with the reason in `kernels_unavailable` / `threads_unavailable`. `launches`: every kernel and
    copy with its device time and launching operator (empty where kernels are not recorded);
    `unlinked_us`: device time the profiler did not link to the code that launched it."""

    kernels: Optional[Dict[str, int]] = None
    copies: int = 0
    launches: List[KernelLaunch] = field(default_factory=list)
    unlinked_us: float = 0.0
    other_threads: Optional[List[OperatorCount]] = None
    kernels_unavailable: Optional[str] = None
    threads_unavailable: Optional[str] = None
    profiler_threads: int = 0


def all_threads_config() -> Tuple[Any, Optional[str]]:
    """(the experimental config that profiles every thread, None) or (None, why it is missing)."""
    prefix = f"torch {torch.__version__}'s profiler has no all-threads mode"
    try:
        from torch.profiler import _ExperimentalConfig
    except ImportError:
        return None, f"{prefix} (no torch.profiler._ExperimentalConfig)"
    try:
        return _ExperimentalConfig(profile_all_threads=True), None
    except (TypeError, RuntimeError):
        return None, f"{prefix} (its _ExperimentalConfig takes no profile_all_threads)"


def kernels_reason(device: torch.device) -> Optional[str]:
    """None where the profiler can list this device's kernels, else why not."""
    if device.type != "cuda":
        return "the cpu backend launches no GPU kernels"
    try:
        from torch.profiler import ProfilerActivity, supported_activities
    except ImportError as error:
        return f"torch {torch.__version__} has no torch.profiler ({error})"
    if ProfilerActivity.CUDA not in supported_activities():
        return f"torch {torch.__version__}'s profiler cannot trace CUDA kernels here (no CUPTI)"
    if not hasattr(torch.cuda, "_sleep"):
        return f"torch {torch.__version__} has no torch.cuda._sleep for the profiler's marker kernel"
    return None


def _marker(device: torch.device) -> None:
    torch.cuda._sleep(1)
    torch.cuda.synchronize(device)


def is_marker(name: str) -> bool:
    qualified = qualified_name(name)
    return qualified.startswith("at::") and qualified.endswith(MARKER_KERNEL)


def _inside_pytorch_operator(event: Any) -> bool:
    parent, depth = event.cpu_parent, 0
    while parent is not None and depth < _MAX_DEPTH:
        if split_name(parent.name)[0] in PYTORCH_NAMESPACES:
            return True
        parent, depth = parent.cpu_parent, depth + 1
    return False


def _other_thread_operators(events: List[Any], caller: Any, glue: FrozenSet[str]) -> List[OperatorCount]:
    """The operators (`namespace::name`) of threads other than `caller` that run inside no PyTorch
    operator, by name (see the module docs)."""
    found: Dict[str, OperatorCount] = {}
    for event in events:
        if (
            event.thread == caller
            or "::" not in event.name
            or event.name == CALLER_MARKER
            or _on_device(event)
            or _inside_pytorch_operator(event)
        ):
            continue
        entry = found.get(event.name)
        if entry is None:
            entry = found[event.name] = OperatorCount(name=event.name, kind=classify(event.name, glue))
        largest = max([0, *(_numel(shape) for shape in (event.input_shapes or []))])
        entry.count += 1
        entry.largest = max(entry.largest, largest)
        entry.result_elements += largest
    return sorted(found.values(), key=lambda entry: -entry.count)


def _numel(shape: Any) -> int:
    """Elements of a recorded input shape: `[4, 8]` → 32; a tensor list `[[4], [8]]` → 12; else 0."""
    if isinstance(shape, (list, tuple)) and all(isinstance(size, int) for size in shape):
        return prod(shape)
    if isinstance(shape, (list, tuple)):
        return sum(_numel(item) for item in shape)
    return 0


def _on_device(event: Any) -> bool:
    """Any device-side event: a kernel, a copy, or a `record_function` range's device-side copy."""
    return str(getattr(event, "device_type", "")).endswith("CUDA")


def is_device(event: Any) -> bool:
    """A kernel or copy the device ran. Not a user annotation: torch 2.x emits, for every kernel
    inside a `record_function` range (the worker's own CALLER_MARKER among them), a device-side
    event of the range's name with that kernel's duration (`is_user_annotation`); counted as a
    kernel, it doubled the call's device time and put half of it under `library`."""
    return _on_device(event) and not getattr(event, "is_user_annotation", False) and event.name != CALLER_MARKER


def _read(profiler, trace: KernelTrace, glue: FrozenSet[str], called: bool) -> None:
    """Fills `trace` from the stopped profiler's events."""
    events = list(profiler.events())
    if trace.other_threads is not None:
        callers = [event.thread for event in events if event.name == CALLER_MARKER]
        if callers:
            trace.other_threads = _other_thread_operators(events, callers[0], glue)
        else:
            trace.other_threads, trace.threads_unavailable = None, "the profiler lost the caller's marker"
    if trace.kernels is None:
        return
    names = Counter(event.name for event in events if is_device(event))
    markers = sum(count for name, count in names.items() if is_marker(name))
    expected = MARKERS_PER_CALL if called else 1
    if markers < expected:
        trace.kernels = None
        trace.kernels_unavailable = (
            f"the profiler recorded {markers} of the worker's {expected} marker "
            f"kernel(s): its list of kernels is incomplete (CUPTI not recording, or "
            f"the profiler was stopped during the call)"
        )
        return
    for name, count in names.items():
        if is_marker(name):
            taken = min(count, expected)
            count, expected = count - taken, expected - taken
        if count <= 0:
            continue
        if is_copy(name):
            trace.copies += count
        else:
            trace.kernels[name] = count
    _launches(events, trace)


def duration_us(event: Any) -> float:
    try:
        return float(event.time_range.elapsed_us())
    except AttributeError:
        return 0.0


def _launching_operators(event: Any) -> List[str]:
    """The PyTorch operators from `event` up through its parents, outermost first."""
    chain, current, depth = [], event, 0
    while current is not None and depth < _MAX_DEPTH:
        if split_name(current.name)[0] in PYTORCH_NAMESPACES:
            chain.append(current.name)
        current, depth = current.cpu_parent, depth + 1
    return list(reversed(chain))


def _launches(events: List[Any], trace: KernelTrace) -> None:
    """Fills `trace.launches` (see KernelLaunch) from the events' kernel links; device time the
    profiler did not link to any CPU event goes in as launched outside PyTorch, and is counted in
    `unlinked_us`."""
    device_us: Dict[str, float] = {}
    for event in events:
        if is_device(event) and not is_marker(event.name):
            device_us[event.name] = device_us.get(event.name, 0.0) + duration_us(event)
    linked_us: Dict[str, float] = {}
    for event in events:
        kernels = getattr(event, "kernels", None) or []
        if _on_device(event) or getattr(event, "is_legacy", False) or not kernels:
            continue
        operators = _launching_operators(event)
        for kernel in kernels:
            if is_marker(kernel.name) or kernel.name not in device_us:
                continue
            trace.launches.append(KernelLaunch(kernel.name, float(kernel.duration), operators))
            linked_us[kernel.name] = linked_us.get(kernel.name, 0.0) + float(kernel.duration)
    for name, total in device_us.items():
        rest = total - linked_us.get(name, 0.0)
        if rest > 0.5:
            trace.launches.append(KernelLaunch(name, rest, []))
            trace.unlinked_us += rest


def _start(device: torch.device, trace: KernelTrace):
    """A started profiler, or None (the reasons in `trace`)."""
    from torch.profiler import ProfilerActivity, profile

    config, trace.threads_unavailable = all_threads_config()
    trace.kernels_unavailable = kernels_reason(device)
    if config is None and trace.kernels_unavailable is not None:
        return None
    if torch.autograd._profiler_enabled():
        reason = "a profiler was already running on the calling thread (started by the candidate)"
        trace.kernels_unavailable = trace.kernels_unavailable or reason
        trace.threads_unavailable = trace.threads_unavailable or reason
        return None
    activities = [ProfilerActivity.CPU]
    if trace.kernels_unavailable is None:
        activities.append(ProfilerActivity.CUDA)
        os.environ["TEARDOWN_CUPTI"] = "1"
        trace.kernels = {}
    options: Dict[str, Any] = {"activities": activities}
    if config is not None:
        options.update(record_shapes=True, experimental_config=config)
        trace.other_threads = []
    try:
        profiler = profile(**options)
        profiler.__enter__()
        return profiler
    except Exception as error:  # the profiler's fault is never the candidate's
        reason = f"the profiler did not start ({type(error).__name__}: {error})"
        trace.kernels, trace.other_threads = None, None
        trace.kernels_unavailable = trace.kernels_unavailable or reason
        trace.threads_unavailable = trace.threads_unavailable or reason
        return None


def _stop(profiler, trace: KernelTrace, glue: FrozenSet[str], called: bool) -> None:
    try:
        profiler.__exit__(None, None, None)
        _read(profiler, trace, glue, called)
    except Exception as error:
        reason = f"the profiler's results could not be read ({type(error).__name__}: {error})"
        if trace.kernels is not None:
            trace.kernels, trace.kernels_unavailable = None, reason
        if trace.other_threads is not None:
            trace.other_threads, trace.threads_unavailable = None, reason


def profiled_call(call: Callable[[], Any], device: torch.device, glue: FrozenSet[str]) -> Tuple[Any, KernelTrace]:
    """(call's result, what the profiler saw); see the module docs. `glue`: the policy's glue
    operators (dispatch_ops.glue_operators), to classify other threads' operators."""
    trace = KernelTrace()
    before = os_thread_count()
    profiler = _start(device, trace)
    if profiler is None:
        return call(), trace
    kernels = trace.kernels is not None
    called = False
    try:
        from torch.profiler import record_function

        if kernels:
            _marker(device)
        started = os_thread_count()
        with record_function(CALLER_MARKER):
            result = call()
        if kernels:
            torch.cuda.synchronize(device)
            _marker(device)
        called = True
    finally:
        ended = os_thread_count()
        _stop(profiler, trace, glue, called)
    counts = (before, started, ended, os_thread_count())
    if None not in counts:
        trace.profiler_threads = max(0, counts[1] - counts[0]) + max(0, counts[3] - counts[2])
    return result, trace
