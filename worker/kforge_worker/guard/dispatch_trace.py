"""A record of the ATen operators one call dispatches, through `TorchDispatchMode`.

`record_dispatch()` pushes a :class:`DispatchRecorder` onto torch's dispatch-mode stack for the
duration of one forward call. Every operator that reaches the dispatcher on this thread while it
is pushed, from Python or from C++ (an extension calling `at::matmul` goes through the dispatcher
too), is counted with the element count of its largest tensor and of its results, the host time
it took (`elapsed_ns`: the operator itself, not the recorder) and how many of its calls came from
inside the candidate's extension functions (build/extension_calls.py); the operator itself runs
unchanged (`func(*args, **kwargs)`), so results are those of an untraced call. An operator whose
results only alias an argument (`view`, `unfold`, `expand`, `as_strided`) is glue whatever its
name. With a :class:`~kforge_worker.guard.provenance.Provenance`, each operator also updates the record
of which tensors hold PyTorch's computation from the inputs. A failure inside the recorder's own
bookkeeping is counted in `errors`, never raised into the candidate's call.

`torch.Tensor(...)`, the legacy constructor, raises under any dispatch mode on torch 1.13
("Creating a new Tensor subclass Tensor but the raw Tensor object is already associated to a python
object"); while the recorder is pushed it runs with the mode set aside (an allocation, never
compute), so that an honest `torch.Tensor()` argument does not turn into an error of the call.

The mode is removed when the call ends, also when it raises. If the candidate changed the mode
stack (popped the recorder, or left modes of its own on it) the recorder says so in `tampered`
and the stack is put back to its depth before the call as far as possible.

What the trace cannot see: operators dispatched on other threads (the mode is thread-local), the
ATen calls inside a custom operator's kernel (the mode sees the custom operator and runs it with
the mode disabled), work that never reaches the dispatcher (at::native:: functions called
directly, cuBLAS/cuDNN, Triton launches, CUDA-graph replays).
"""

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Tuple

import torch

from .dispatch_ops import COMPUTE, GLUE, classify, operator_name
from ..build.extension_calls import ExtensionCalls
from .provenance import Provenance, is_view

try:  # PyTorch 1.13 and 2.x
    from torch.utils import _python_dispatch as _modes

    _Base = _modes.TorchDispatchMode
    _UNAVAILABLE: Optional[str] = None
except (ImportError, AttributeError) as error:  # pragma: no cover - older torch
    _modes = None
    _Base = object
    _UNAVAILABLE = f"torch {torch.__version__} has no torch.utils._python_dispatch.TorchDispatchMode ({error})"

_MAX_DEPTH = 4


def unavailable_reason() -> Optional[str]:
    """None where the trace works on this torch, else why not."""
    if _UNAVAILABLE is not None:
        return _UNAVAILABLE
    for name in ("_get_current_dispatch_mode", "_pop_mode"):
        if not hasattr(_modes, name):
            return f"torch {torch.__version__}'s torch.utils._python_dispatch lacks {name}"
    if not hasattr(torch._C, "_len_torch_dispatch_stack"):
        return f"torch {torch.__version__} has no torch._C._len_torch_dispatch_stack"
    return None


@dataclass
class OperatorCount:
    """One operator's calls: how many, its class, the largest tensor any call touched, the
    elements of its results summed over the calls."""

    name: str
    kind: str
    count: int = 0
    largest: int = 0
    result_elements: int = 0
    elapsed_ns: int = 0
    inside_extension: int = 0


def _numels(value: Any, depth: int = 0) -> Iterator[int]:
    if isinstance(value, torch.Tensor):
        yield value.numel()
    elif depth < _MAX_DEPTH and isinstance(value, (list, tuple)):
        for item in value:
            yield from _numels(item, depth + 1)
    elif depth < _MAX_DEPTH and isinstance(value, dict):
        for item in value.values():
            yield from _numels(item, depth + 1)


class DispatchRecorder(_Base):
    """Counts the operators dispatched while it is the current mode; see the module docs.

    `extension`: the candidate's extension calls (whether an operator came from inside one);
    `provenance`: the record of PyTorch's own results, or None. `dispatch_ns` is the host time of
    every operator with the recorder's bookkeeping around it, `extension_dispatch_ns` the part of it
    spent in operators dispatched from inside the extension (what the extension's own time is
    measured without)."""

    def __init__(
        self, glue: FrozenSet[str], extension: Optional[ExtensionCalls] = None, provenance: Optional[Provenance] = None
    ):
        super().__init__()
        self.glue = glue
        self.extension = extension
        self.provenance = provenance
        self.operators: Dict[Any, OperatorCount] = {}
        self.errors = 0
        self.tampered: Optional[str] = None
        self.unavailable: Optional[str] = None
        self.dispatch_ns = 0
        self.extension_dispatch_ns = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        entered = time.perf_counter_ns()
        inside = self.extension is not None and self.extension.inside > 0
        inputs = None
        if self.provenance is not None:
            try:
                inputs = self.provenance.before(func, args, kwargs)
            except Exception:
                self.errors += 1
        started = time.perf_counter_ns()
        result = func(*args, **(kwargs or {}))
        elapsed = time.perf_counter_ns() - started
        try:
            entry = self._note(func, args, kwargs, result, elapsed, inside)
            if self.provenance is not None:
                self.provenance.after(func, entry.name, entry.kind, args, kwargs, result, inputs)
        except Exception:  # the recorder's fault must never become the candidate's
            self.errors += 1
        spent = time.perf_counter_ns() - entered
        self.dispatch_ns += spent
        if inside:
            self.extension_dispatch_ns += spent
        return result

    def _note(self, func, args, kwargs, result, elapsed: int, inside: bool) -> OperatorCount:
        entry = self.operators.get(func)
        if entry is None:
            name = operator_name(func)
            kind = classify(name, self.glue)
            if kind == COMPUTE and is_view(func):
                kind = GLUE
            entry = self.operators[func] = OperatorCount(name=name, kind=kind)
        entry.count += 1
        entry.elapsed_ns += elapsed
        entry.inside_extension += int(inside)
        if entry.kind == GLUE:
            return entry
        results = list(_numels(result))
        touched = max([0, *_numels(args), *_numels(kwargs or {}), *results])
        entry.largest = max(entry.largest, touched)
        entry.result_elements += sum(results)
        return entry

    def counts(self) -> List[OperatorCount]:
        """Operators by decreasing count, then in the order they were first dispatched."""
        return sorted(self.operators.values(), key=lambda entry: -entry.count)


@contextmanager
def _legacy_constructor_outside_modes() -> Iterator[None]:
    """While pushed: `torch.Tensor(...)` runs with the dispatch modes set aside (module docs)."""
    own = "__new__" in torch.Tensor.__dict__
    original = torch.Tensor.__dict__.get("__new__")
    if _modes is None or not hasattr(_modes, "_pop_mode_temporarily"):
        yield
        return
    constructor = torch.Tensor.__new__

    def legacy_new(cls, *args, **kwargs):
        if cls is torch.Tensor and _depth() > 0:
            with _modes._pop_mode_temporarily():
                return constructor(cls, *args, **kwargs)
        return constructor(cls, *args, **kwargs)

    torch.Tensor.__new__ = legacy_new
    try:
        yield
    finally:
        if own:
            torch.Tensor.__new__ = original
        else:
            del torch.Tensor.__new__


def _depth() -> int:
    return int(torch._C._len_torch_dispatch_stack())


def _stack() -> List[Any]:
    return [torch._C._get_dispatch_stack_at(index) for index in range(_depth())]


def _leave(recorder: DispatchRecorder, depth: int) -> Optional[str]:
    """Removes the recorder (and anything above it); what the candidate changed, or None."""
    stack = _stack()
    if len(stack) == depth + 1 and stack[-1] is recorder:
        recorder.__exit__(None, None, None)
        return None
    if not any(mode is recorder for mode in stack):
        return (
            f"the worker's dispatch trace was removed from torch's dispatch-mode stack during the call "
            f"({len(stack)} mode(s) left, {depth} before it)"
        )
    extra = []
    while _depth() > depth + 1 and _modes._get_current_dispatch_mode() is not recorder:
        extra.append(type(_modes._pop_mode()).__name__)
    if _modes._get_current_dispatch_mode() is recorder:
        recorder.__exit__(None, None, None)
    return f"the call left dispatch mode(s) {', '.join(extra) or '?'} pushed above the worker's trace"


@contextmanager
def record_dispatch(
    glue: FrozenSet[str], extension: Optional[ExtensionCalls] = None, provenance: Optional[Provenance] = None
) -> Iterator[DispatchRecorder]:
    """Pushes a DispatchRecorder for the body of the `with`; removes it however the body ends.

    Never raises on its own account: where the mode cannot be pushed, `recorder.unavailable` says
    why and the body runs untraced; where it cannot be removed, `recorder.tampered` says why (an
    untouched stack is always removable)."""
    recorder = DispatchRecorder(glue, extension, provenance)
    recorder.unavailable = unavailable_reason()
    depth = 0
    if recorder.unavailable is None:
        try:
            depth = _depth()
            recorder.__enter__()
        except Exception as error:  # a torch whose mode API differs: run untraced, say so
            recorder.unavailable = f"pushing a TorchDispatchMode failed ({type(error).__name__}: {error})"
    try:
        if recorder.unavailable is None:
            with _legacy_constructor_outside_modes():
                yield recorder
        else:
            yield recorder
    finally:
        if recorder.unavailable is None:
            try:
                recorder.tampered = _leave(recorder, depth)
            except Exception as error:
                recorder.tampered = f"removing the worker's dispatch trace failed " f"({type(error).__name__}: {error})"


def traced_call(
    call: Callable[[], Any],
    glue: FrozenSet[str],
    extension: Optional[ExtensionCalls] = None,
    provenance: Optional[Provenance] = None,
) -> Tuple[Any, DispatchRecorder]:
    """(call's result, its recorder); the call's own exceptions propagate, with the mode removed."""
    with record_dispatch(glue, extension, provenance) as recorder:
        result = call()
    return result, recorder
