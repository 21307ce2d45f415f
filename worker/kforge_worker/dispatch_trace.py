"""A record of the ATen operators one call dispatches, through `TorchDispatchMode`.

`record_dispatch()` pushes a :class:`DispatchRecorder` onto torch's dispatch-mode stack for the
duration of one forward call. Every operator that reaches the dispatcher on this thread while it
is pushed, from Python or from C++ (an extension calling `at::matmul` goes through the dispatcher
too), is counted with the element count of its largest tensor and of its results; the operator
itself runs unchanged (`func(*args, **kwargs)`), so results are those of an untraced call. A
failure inside the recorder's own bookkeeping is counted in `errors`, never raised into the
candidate's call.

The mode is removed when the call ends, also when it raises. If the candidate changed the mode
stack (popped the recorder, or left modes of its own on it) the recorder says so in `tampered`
and the stack is put back to its depth before the call as far as possible.

What the trace cannot see: operators dispatched on other threads (the mode is thread-local), the
ATen calls inside a custom operator's kernel (the mode sees the custom operator and runs it with
the mode disabled), work that never reaches the dispatcher (at::native:: functions called
directly, cuBLAS/cuDNN, Triton launches, CUDA-graph replays).
"""

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Tuple

import torch

from .dispatch_ops import GLUE, classify, operator_name

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
    """Counts the operators dispatched while it is the current mode; see the module docs."""

    def __init__(self, glue: FrozenSet[str]):
        super().__init__()
        self.glue = glue
        self.operators: Dict[Any, OperatorCount] = {}
        self.errors = 0
        self.tampered: Optional[str] = None
        self.unavailable: Optional[str] = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        try:
            self._note(func, args, kwargs, result)
        except Exception:  # the recorder's fault must never become the candidate's
            self.errors += 1
        return result

    def _note(self, func, args, kwargs, result) -> None:
        entry = self.operators.get(func)
        if entry is None:
            name = operator_name(func)
            entry = self.operators[func] = OperatorCount(name=name, kind=classify(name, self.glue))
        entry.count += 1
        if entry.kind == GLUE:
            return
        results = list(_numels(result))
        touched = max([0, *_numels(args), *_numels(kwargs or {}), *results])
        entry.largest = max(entry.largest, touched)
        entry.result_elements += sum(results)

    def counts(self) -> List[OperatorCount]:
        """Operators by decreasing count, then in the order they were first dispatched."""
        return sorted(self.operators.values(), key=lambda entry: -entry.count)


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
        return (f"the worker's dispatch trace was removed from torch's dispatch-mode stack during the call "
                f"({len(stack)} mode(s) left, {depth} before it)")
    extra = []
    while _depth() > depth + 1 and _modes._get_current_dispatch_mode() is not recorder:
        extra.append(type(_modes._pop_mode()).__name__)
    if _modes._get_current_dispatch_mode() is recorder:
        recorder.__exit__(None, None, None)
    return f"the call left dispatch mode(s) {', '.join(extra) or '?'} pushed above the worker's trace"


@contextmanager
def record_dispatch(glue: FrozenSet[str]) -> Iterator[DispatchRecorder]:
    """Pushes a DispatchRecorder for the body of the `with`; removes it however the body ends.

    Never raises on its own account: where the mode cannot be pushed, `recorder.unavailable` says
    why and the body runs untraced; where it cannot be removed, `recorder.tampered` says why (an
    untouched stack is always removable)."""
    recorder = DispatchRecorder(glue)
    recorder.unavailable = unavailable_reason()
    depth = 0
    if recorder.unavailable is None:
        try:
            depth = _depth()
            recorder.__enter__()
        except Exception as error:  # a torch whose mode API differs: run untraced, say so
            recorder.unavailable = f"pushing a TorchDispatchMode failed ({type(error).__name__}: {error})"
    try:
        yield recorder
    finally:
        if recorder.unavailable is None:
            try:
                recorder.tampered = _leave(recorder, depth)
            except Exception as error:
                recorder.tampered = (f"removing the worker's dispatch trace failed "
                                     f"({type(error).__name__}: {error})")


def traced_call(call: Callable[[], Any], glue: FrozenSet[str]) -> Tuple[Any, DispatchRecorder]:
    """(call's result, its recorder); the call's own exceptions propagate, with the mode removed."""
    with record_dispatch(glue) as recorder:
        result = call()
    return result, recorder
