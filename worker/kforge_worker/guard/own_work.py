"""Did the candidate's own code do the work of the traced call? The run-time rules that hold under
every policy whose `own_work` is `"reject"` (policy.requires_own_work: every shipped policy but
`pytorch`, which records them as notes), decided from what ran, never from how the source reads:

- **a fallback ran** (`silent-fallback`): an extension function of the candidate's raised during
  the traced call (build/extension_calls.py) and forward still returned an answer;
- **PyTorch computed the output** (cpu, `torch-fallback`): every output leaf holds what PyTorch
  operators computed from the inputs and nothing of the candidate's own changed it since
  (provenance.py) — a wrapper around ATen, in Python or inside the extension;
- **no native code, PyTorch did the work** (cpu, `torch-fallback`): the candidate loaded no
  extension and registered no operator, and PyTorch compute beyond bookkeeping ran (torch_fallback.py)
  — its "kernel" is PyTorch;
- **its kernel was never called** (cpu, `own-kernel`): it loaded an extension, and none of the
  extension's functions returned and no custom operator of its own ran during the call (on a CUDA
  device, own_kernel.py decides from the profiler's kernels).

Where the static guard found a PyTorch fallback in an except handler, or the candidate caught its
own build failure, a PyTorch rejection is named `silent-fallback`: the fallback path is what ran.
"""

from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence

from .own_kernel import severity
from .policy_rejection import own_work_waived

CHECK_FALLBACK = "silent-fallback"
CHECK_TORCH = "torch-fallback"
CHECK_OWN = "own-kernel"


@dataclass
class Outcome:
    check: str
    status: str  # "reject" | "note" | "passed"
    message: str


def _level(policy: Mapping[str, Any], check: str) -> str:
    return severity(policy, check)


def _noted(level: str, policy: Mapping[str, Any]) -> str:
    """How a message ends: a rejection names the policy that would measure the candidate as it is;
    a note says the policy does not reject it."""
    if level == "reject":
        return f" ({own_work_waived()})"
    return f" (recorded only: the policy `{policy.get('name', '?')}` does not reject it)"


def _fallback_context(static_fallbacks: Sequence[Mapping[str, Any]], failed_builds: Sequence[str]) -> Optional[str]:
    if failed_builds:
        return f"its extension failed to build ({failed_builds[0]}) and the candidate went on without it"
    if static_fallbacks:
        first = static_fallbacks[0]
        line = f" at line {first['line']}" if first.get("line") else ""
        return f"the source falls back to PyTorch in an except handler{line}"
    return None


def fallback_raised(extensions: Any, policy: Mapping[str, Any], where: str) -> Optional[Outcome]:
    """A `silent-fallback` outcome when one of the extension's functions raised during the call."""
    raised = extensions.raised() if extensions is not None else []
    if not raised:
        return None
    first = raised[0]
    level = _level(policy, CHECK_FALLBACK)
    return Outcome(
        CHECK_FALLBACK,
        level,
        (
            f"{where}: its extension function {first.name} raised ({first.first_error}) and forward returned an "
            f"answer anyway: a fallback path ran instead of its kernel; let the error surface{_noted(level, policy)}"
        ),
    )


def pytorch_output(
    producers: Optional[List[str]],
    policy: Mapping[str, Any],
    where: str,
    static_fallbacks: Sequence[Mapping[str, Any]],
    failed_builds: Sequence[str],
) -> Optional[Outcome]:
    """When the output is PyTorch's own computation from the inputs (provenance.output_is_torch)."""
    if producers is None:
        return None
    context = _fallback_context(static_fallbacks, failed_builds)
    check = CHECK_FALLBACK if context else CHECK_TORCH
    level = _level(policy, check)
    made = ", ".join(producers) or "PyTorch operators"
    why = f"; {context}" if context else ""
    return Outcome(
        check,
        level,
        (
            f"{where}: the output is PyTorch's own computation from the inputs ({made}) and no code of the "
            f"candidate's changed it: no kernel of its own did the work{why}; compute the result in your "
            f"kernel{_noted(level, policy)}"
        ),
    )


def no_native_code(
    work: Sequence[Any],
    policy: Mapping[str, Any],
    where: str,
    static_fallbacks: Sequence[Mapping[str, Any]],
    failed_builds: Sequence[str],
) -> Optional[Outcome]:
    """When a candidate with no native code of its own handed compute to PyTorch (`work`: the
    compute operators beyond bookkeeping, torch_fallback.judge's `compute`)."""
    if not work:
        return None
    context = _fallback_context(static_fallbacks, failed_builds)
    check = CHECK_FALLBACK if context else CHECK_TORCH
    level = _level(policy, check)
    why = f"; {context}" if context else ""
    return Outcome(
        check,
        level,
        (
            f"{where}: the candidate runs no native code of its own (no extension, no custom operator), and "
            f"forward handed the work to PyTorch ({', '.join(work[:8])}){why}: its kernel is PyTorch; write the "
            f"kernel{_noted(level, policy)}"
        ),
    )


def cpu_kernel_ran(extensions: Any, custom_operators: Sequence[Any], policy: Mapping[str, Any], where: str) -> Outcome:
    """`own-kernel` on the cpu backend: did a function of its extension or an operator of its own run?"""
    returned = extensions.returned() if extensions is not None else []
    if returned or custom_operators:
        ran = [f"{entry.name} ×{entry.returned}" for entry in returned]
        ran += [f"{entry.name} ×{entry.count}" for entry in custom_operators]
        return Outcome(CHECK_OWN, "passed", f"{where}: its own code ran: {', '.join(ran)}")
    if extensions is None or not extensions.modules:
        return Outcome(
            CHECK_OWN,
            "passed",
            (
                f"{where}: the candidate loads no extension and registers no operator: its Python is its kernel, "
                f"and PyTorch compute in it is judged by torch-fallback as all of the work"
            ),
        )
    built = ", ".join(extensions.wrapped[:6]) or ", ".join(extensions.modules)
    level = _level(policy, CHECK_OWN)
    return Outcome(
        CHECK_OWN,
        level,
        (
            f"{where}: it builds {built}, and forward called none of its functions: no kernel of its own ran"
            f"{_noted(level, policy)}"
        ),
    )
