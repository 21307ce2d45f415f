"""The candidate's own extension functions as they are called: evidence that its own code ran.

`load_inline`/`load` return a module whose functions (pybind11 builtins) are the candidate's
compiled code. build.py hands each module it loads to :meth:`ExtensionCalls.adopt`, which replaces
every public function of the module with a thin wrapper in the trusted harness, before any of the
candidate's own code can take a reference to it (the module is wrapped before `load_inline`
returns). While :attr:`ExtensionCalls.active` is set (the traced correctness call only) each call
is recorded: how many returned, how many raised (and the first error), the host time spent inside
(ns). Outside the
traced call a wrapper does one attribute test and calls the function (a few hundred nanoseconds of
host time per call, the same in every timed call).

A build that raised (the compiler failed, the candidate caught the exception) is recorded in
`failed_builds`: a candidate that swallows its own build failure and answers with PyTorch is a
fallback, not a plain PyTorch program.
"""

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

#: Errors kept per function; the message of the first is what a reason quotes.
ERROR_TEXT_LIMIT = 300


@dataclass
class FunctionCalls:
    """One extension function's calls in the traced call: `elapsed_ns` is the host time of the calls
    that returned, `raised_ns` of those that raised (no kernel's work, and not counted as own)."""

    name: str
    returned: int = 0
    raised: int = 0
    first_error: Optional[str] = None
    elapsed_ns: int = 0
    raised_ns: int = 0


@dataclass
class ExtensionCalls:
    """See the module docs. `inside` is the nesting depth of extension calls in progress."""

    active: bool = False
    inside: int = 0
    functions: Dict[str, FunctionCalls] = field(default_factory=dict)
    modules: List[str] = field(default_factory=list)
    wrapped: List[str] = field(default_factory=list)
    failed_builds: List[str] = field(default_factory=list)

    # --- set-up, from build.py ------------------------------------------------------------

    def adopt(self, module: Any) -> None:
        """Wraps every public builtin function of an extension module (pybind11's functions)."""
        name = getattr(module, "__name__", "extension")
        self.modules.append(name)
        for attribute, value in list(vars(module).items()):
            if attribute.startswith("_") or type(value).__name__ != "builtin_function_or_method":
                continue
            qualified = f"{name}.{attribute}"
            try:
                setattr(module, attribute, self._wrapper(qualified, value))
            except (AttributeError, TypeError):
                continue
            self.wrapped.append(qualified)

    def build_failed(self, error: BaseException) -> None:
        self.failed_builds.append(_describe(error))

    def _wrapper(self, qualified: str, function: Callable) -> Callable:
        calls = self

        def extension_function(*args, **kwargs):
            if not calls.active:
                return function(*args, **kwargs)
            return calls._call(qualified, function, args, kwargs)

        extension_function.__name__ = getattr(function, "__name__", qualified)
        extension_function.__qualname__ = extension_function.__name__
        extension_function.__doc__ = getattr(function, "__doc__", None)
        return extension_function

    # --- recording ------------------------------------------------------------------------

    def _call(self, qualified: str, function: Callable, args: tuple, kwargs: dict) -> Any:
        entry = self.functions.get(qualified)
        if entry is None:
            entry = self.functions[qualified] = FunctionCalls(qualified)
        self.inside += 1
        started = time.perf_counter_ns()
        try:
            result = function(*args, **kwargs)
        except BaseException as error:
            entry.raised += 1
            entry.raised_ns += time.perf_counter_ns() - started
            if entry.first_error is None:
                entry.first_error = _describe(error)
            raise
        finally:
            self.inside -= 1
        entry.elapsed_ns += time.perf_counter_ns() - started
        entry.returned += 1
        return result

    def start(self) -> None:
        """Begins recording (the traced call); earlier records are dropped."""
        self.functions = {}
        self.inside = 0
        self.active = True

    def stop(self) -> None:
        self.active = False

    # --- reading --------------------------------------------------------------------------

    @property
    def has_native_code(self) -> bool:
        """Whether the candidate loaded an extension of its own (or tried to build one)."""
        return bool(self.modules or self.failed_builds)

    def returned(self) -> List[FunctionCalls]:
        return [entry for entry in self.functions.values() if entry.returned]

    def raised(self) -> List[FunctionCalls]:
        return [entry for entry in self.functions.values() if entry.raised]

    def own_ns(self) -> int:
        """Host time inside the extension's functions that returned (outermost calls), before the ATen
        operators they dispatched are subtracted (dispatch_trace.py counts those)."""
        return sum(entry.elapsed_ns for entry in self.functions.values())


def _describe(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(error).__name__}: {first}"[:ERROR_TEXT_LIMIT]
