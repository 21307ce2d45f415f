"""Where the time of one traced correctness call went: the candidate's own kernels, vendor
libraries, PyTorch operators (docs/spec.md section 8, `attribution`).

Measured on the call that the dispatch trace and the profiler already watch (the first
correctness trial), and sent as the candidate role's `attribution` message before that call is
judged, so that a rejected candidate carries it too. The parent adds which operators the
reference also runs (`in_reference`) and which it never runs (`substituted_ops`).

- a CUDA device (`measured: "device"`): device time of every kernel and copy the profiler
  recorded (kernel_trace.KernelLaunch): a kernel the candidate built (kernel_names.OwnKernels) is
  `own`; any other kernel launched inside a PyTorch operator is `torch`, charged to that operator;
  the rest (launched from the candidate's native code outside every PyTorch operator: cuBLAS,
  cuDNN, CUTLASS called directly) is `library`.
- cpu (`measured: "host"`): host time. `torch`: each PyTorch compute operator's own time, from
  forward or from inside the extension (dispatch_trace.OperatorCount.elapsed_ns); `own`: the time
  inside the candidate's extension functions less the operators they dispatched, plus its own
  custom operators; a candidate with no native code at all has no own time (its Python between
  the operators is noted, not counted as a kernel of its own). `library` is 0 (a library the
  extension calls runs inside its functions and counts as its own).

Each listed operator says whether the guard counts it as PyTorch doing the work (`compute`: a
compute operator beyond bookkeeping, torch_fallback.work) or not (glue that launched a kernel, such
as a `copy_` or a `fill_`, or scalar bookkeeping): the parent names only `compute` operators the
reference never runs as substituted, so that name never rests on how long an operator took.
"""

from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, Optional, Sequence

from .dispatch_ops import COMPUTE, OWN

#: Operators listed in the message (by time); the rest are summed into the totals only.
LISTED_OPERATORS = 24


@dataclass
class Attribution:
    """Times in milliseconds; `unavailable` says what could not be measured (then the times are 0)."""

    measured: str
    own_ms: float = 0.0
    library_ms: float = 0.0
    torch_ms: float = 0.0
    torch_ops: List[Dict[str, Any]] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    unavailable: Optional[str] = None

    def own_share(self) -> Optional[float]:
        total = self.own_ms + self.library_ms + self.torch_ms
        if self.unavailable is not None or total <= 0:
            return None
        return self.own_ms / total

    def message(self) -> Dict[str, Any]:
        """The fields of the `attribution` message (docs/worker-protocol.md)."""
        share = self.own_share()
        return {
            "measured": self.measured,
            "own_share": round(share, 6) if share is not None else None,
            "by_origin_ms": {"own": _ms(self.own_ms), "library": _ms(self.library_ms), "torch": _ms(self.torch_ms)},
            "torch_ops": self.torch_ops[:LISTED_OPERATORS],
            "notes": self.notes,
            "unavailable": self.unavailable,
        }


def _ms(value: float) -> float:
    return round(value, 6)


def unavailable(measured: str, reason: str) -> Attribution:
    return Attribution(measured=measured, unavailable=reason)


def cpu(
    operators: Sequence[Any],
    extensions: Any,
    wall_ns: int,
    dispatch_ns: int,
    extension_dispatch_ns: int,
    working: FrozenSet[str] = frozenset(),
) -> Attribution:
    """Host-time attribution of one traced cpu call (see the module docs); `working`: the names of
    the operators that did work (torch_fallback.work)."""
    compute = [entry for entry in operators if entry.kind == COMPUTE and entry.elapsed_ns > 0]
    custom = [entry for entry in operators if entry.kind == OWN]
    torch_ns = sum(entry.elapsed_ns for entry in compute)
    notes: List[str] = []
    if extensions is not None and (extensions.modules or custom):
        extension_ns = max(0, extensions.own_ns() - extension_dispatch_ns)
        own_ns = extension_ns + sum(entry.elapsed_ns for entry in custom)
    else:
        # No kernel of its own exists: Python between PyTorch's operators is glue, not an own kernel.
        own_ns = 0
        python_ms = max(0, wall_ns - dispatch_ns) / 1e6
        notes.append(
            f"no native code: none of the call's time is in kernels of the candidate's own; "
            f"{python_ms:.4f} ms was its Python between PyTorch's operators"
        )
    ops = sorted(compute, key=lambda entry: -entry.elapsed_ns)
    return Attribution(
        measured="host",
        own_ms=own_ns / 1e6,
        torch_ms=torch_ns / 1e6,
        notes=notes,
        torch_ops=[
            {
                "op": entry.name,
                "ms": _ms(entry.elapsed_ns / 1e6),
                "calls": entry.count,
                "inside_extension": entry.inside_extension,
                "compute": entry.name in working,
            }
            for entry in ops
        ],
    )


def device(
    launches: Sequence[Any],
    owns: Any,
    traced: FrozenSet[str],
    unlinked_us: float,
    working: FrozenSet[str] = frozenset(),
) -> Attribution:
    """Device-time attribution of one traced cuda call (see the module docs); `owns(name)` tells a
    kernel of the candidate's own, `traced` are the dispatch trace's operator names (without their
    overloads), `working` those of them that did work (torch_fallback.work)."""
    own_us = library_us = 0.0
    per_operator: Dict[str, List[float]] = {}
    for launch in launches:
        if owns(launch.name):
            own_us += launch.duration_us
            continue
        operator = launch.operator(traced)
        if operator is None:
            library_us += launch.duration_us
        else:
            per_operator.setdefault(operator, []).append(launch.duration_us)
    notes: List[str] = []
    if unlinked_us > 0:
        notes.append(
            f"{unlinked_us / 1e3:.4f} ms of device time was not linked by the profiler to the code that "
            f"launched it; it is counted as library time unless the kernel is the candidate's own"
        )
    ops = sorted(per_operator.items(), key=lambda item: -sum(item[1]))
    return Attribution(
        measured="device",
        own_ms=own_us / 1e3,
        library_ms=library_us / 1e3,
        torch_ms=sum(sum(times) for times in per_operator.values()) / 1e3,
        notes=notes,
        torch_ops=[
            {"op": name, "ms": _ms(sum(times) / 1e3), "calls": len(times), "compute": name in working}
            for name, times in ops
        ],
    )
