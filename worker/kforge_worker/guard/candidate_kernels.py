"""Which kernels the candidate built, for `own-kernel` (own_kernel.py): the kernels compiled into
its extensions (cuobjdump, build_info.py), and the name of its module, by which its backends' JIT
kernels are found later, when the traced call is judged (the registry's `jit_kernel_names`;
backends/*/trace_names.py).

`sources(shared_objects, build_info, module_name)` is taken right after the build.
"""

from dataclasses import dataclass, field
from typing import Iterable, List, Optional

from ..build.build_info import collect_kernel_names


@dataclass(frozen=True)
class OwnKernelSources:
    """`built`: kernel names of the candidate's extensions (demangled where c++filt ran);
    `unknown`: why they could not be listed although extensions were built (None when they were,
    or when there were none); `module_name`: the candidate module's name, for its JIT kernels."""

    built: List[str] = field(default_factory=list)
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
    return OwnKernelSources(built=names, unknown=unknown, module_name=module_name)
