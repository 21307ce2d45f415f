"""The backends, the only place that names them all; code elsewhere asks here (`backend_for`)
instead of comparing names. Adding a backend is adding its folder and one entry in `BACKENDS`
(CONTRIBUTING.md, "Adding a backend")."""

from typing import Dict, List, Optional, Tuple

from .backend import Backend
from .cpu import BACKEND as CPU
from .cuda import BACKEND as CUDA
from .triton import BACKEND as TRITON

#: In the order requests and messages list them (src/core/verdict.ts, `BACKENDS`).
BACKENDS: Tuple[Backend, ...] = (CUDA, TRITON, CPU)
NAMES: Tuple[str, ...] = tuple(backend.name for backend in BACKENDS)


class UnknownBackend(ValueError):
    """A backend name that is not in the registry."""


def described(names: Tuple[str, ...] = NAMES) -> str:
    """`cuda, triton or cpu`."""
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


def backend_for(name: str) -> Backend:
    for backend in BACKENDS:
        if backend.name == name:
            return backend
    raise UnknownBackend(f"expected `backend` to be one of {', '.join(NAMES)}, got {name!r}")


def backend_for_device(device_type: str) -> Optional[Backend]:
    """The first backend that runs on devices of `device_type` (on `cuda`, the cuda backend), or None."""
    return next((backend for backend in BACKENDS if backend.detect.device_type == device_type), None)


def device_spellings() -> str:
    """How requests name devices: `` `cpu` or `cuda:N` ``."""
    spellings = sorted({backend.detect.spelling for backend in BACKENDS})
    return " or ".join(spellings)


def compile_error_subject(error: BaseException) -> Optional[str]:
    """What did not compile when `error` is a backend compiler's refusal (`the Triton kernel`), else None."""
    return next((b.build.compile_error_subject for b in BACKENDS if b.build.is_compilation_error(error)), None)


def jit_kernel_names(module_name: Optional[str]) -> List[str]:
    """Every backend's live JIT kernels defined in `module_name`, sorted."""
    return sorted({name for backend in BACKENDS for name in backend.trace_names.jit_kernel_names(module_name)})


def _unique(values) -> tuple:
    return tuple(dict.fromkeys(values))


#: Every backend's decorator prefixes that make a function a JIT kernel (static guard).
JIT_DECORATORS = _unique(prefix for backend in BACKENDS for prefix in backend.trace_names.jit_decorators)
#: Every backend's suffixes the profiler may append to a JIT kernel's name after `_`.
JIT_LAUNCH_SUFFIXES = _unique(b.trace_names.jit_launch_suffix for b in BACKENDS if b.trace_names.jit_launch_suffix)
#: Every backend's calls that hand out a stream beside torch's (static guard's side-stream).
STREAM_CALLS = _unique(call for backend in BACKENDS for call in backend.trace_names.stream_calls)
#: Every backend's modules that `prime` compiles ahead.
PRELOAD_MODULES = _unique(module for backend in BACKENDS for module in backend.build.preload_modules)


def tool_versions() -> Dict[str, Optional[str]]:
    """Every backend's tool versions, for the `hello` environment."""
    versions: Dict[str, Optional[str]] = {}
    for backend in BACKENDS:
        versions.update(backend.doctor.tool_versions())
    return versions
