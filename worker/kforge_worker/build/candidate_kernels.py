"""Which kernels the candidate built, for `own-kernel` (own_kernel.py): the kernels compiled into
its extensions (cuobjdump, build_info.py) and its Triton JIT functions.

`sources(shared_objects, build_info, module_name)` is taken right after the build; the Triton
names are read later, when the traced call is judged (`triton_kernel_names`), so that JIT
functions the candidate defines in its constructor or forward count too: every
`triton.runtime.jit.JITFunction` alive in the process whose Python function belongs to the
candidate's module (its `__module__`). Kernels that torch itself generates (Inductor's
`triton_poi_fused_…`) belong to other modules and are not the candidate's.
"""

import gc
import sys
from dataclasses import dataclass, field
from typing import Iterable, List, Optional

from .build_info import collect_kernel_names


@dataclass(frozen=True)
class OwnKernelSources:
    """`cuda`: kernel names of the candidate's extensions (demangled where c++filt ran);
    `unknown`: why they could not be listed although extensions were built (None when they were,
    or when there were none); `module_name`: the candidate module's name, for its Triton kernels."""

    cuda: List[str] = field(default_factory=list)
    unknown: Optional[str] = None
    module_name: Optional[str] = None


def sources(shared_objects: Iterable[str], build_info: Optional[dict], module_name: str) -> OwnKernelSources:
    """From the `build-info` fields where the backend sent them, else by running cuobjdump here."""
    paths = sorted(set(shared_objects))
    if not paths:
        return OwnKernelSources(module_name=module_name)
    info = build_info if build_info is not None else collect_kernel_names(paths)
    names = sorted({kernel["name"] for kernel in info.get("kernels", [])})
    unknown = None
    if info.get("error"):
        unknown = f"the kernels of its extension(s) could not be listed: {info['error']}"
    return OwnKernelSources(cuda=names, unknown=unknown, module_name=module_name)


def triton_kernel_names(module_name: Optional[str]) -> List[str]:
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
