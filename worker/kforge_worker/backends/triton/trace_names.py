"""The triton backend's kernels are its JIT functions: the profiler lists a launch by the
function's name (Triton 2.x appended a specialisation suffix such as `_0d1d2de`), and the static
guard knows a kernel by its `@triton.…` decorator.

`jit_kernel_names` is read when the traced call is judged, so that JIT functions the candidate
defines in its constructor or forward count too: every `triton.runtime.jit.JITFunction` alive in
the process whose Python function belongs to the candidate's module (its `__module__`). Kernels
that torch itself generates (Inductor's `triton_poi_fused_…`) belong to other modules and are not
the candidate's.
"""

import gc
import re
import sys
from typing import List, Optional

from ..backend import TraceNames


def jit_kernel_names(module_name: Optional[str]) -> List[str]:
    """Names of the live Triton JIT functions defined in module `module_name` (none without Triton)."""
    if module_name is None or "triton" not in sys.modules:
        return []
    try:
        from triton.runtime.jit import JITFunction
    except ImportError:
        return []
    names = set()
    for candidate in gc.get_objects():
        if issubclass(type(candidate), JITFunction):  # type(): no object's __class__ hook runs
            function = getattr(candidate, "fn", None)
            if getattr(function, "__module__", None) == module_name:
                names.add(getattr(function, "__name__", None) or getattr(candidate, "__name__", ""))
    return sorted(name for name in names if name)


TRACE_NAMES = TraceNames(
    jit_kernel_names=jit_kernel_names,
    # A Triton 2.x specialisation suffix after `name_`: `0d1d2de`, `0d1d234c`.
    jit_launch_suffix=re.compile(r"(?:\d+[a-z]*)+"),
    jit_decorators=("triton.",),
    stream_calls=("triton.runtime.driver.active.get_current_stream",),
)
