"""`Backend`: what one backend decides, one field per module of its folder (backends/__init__.py).

Every callable imports torch when it runs, never at import (backends/__init__.py says why).
"""

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Pattern, Tuple

#: A `torch.device` (typed loosely: this module does not import torch).
Device = Any


class DeviceMismatch(ValueError):
    """The device a request names does not fit the backend, or does not exist here; the message
    says which (protocol/run_device.py turns it into the request's fault)."""


@dataclass(frozen=True)
class Detect:
    """`device_type`: the torch device type its candidates run on; `spelling`: how a request names
    such a device (`cuda:N`); `resolve(device, spelled)`: the device to run on, made current,
    from the parsed device and its spelling (raises DeviceMismatch)."""

    device_type: str
    spelling: str
    resolve: Callable[[Device, str], Device]


def _nothing(device: Device) -> None:
    return None


def _never(error: BaseException) -> bool:
    return False


@dataclass(frozen=True)
class Build:
    """`configure(device)`: the build environment of extensions for the device (architecture);
    `lists_built_kernels`: whether the kernels compiled into its extensions are listed after the
    build (`build-info`, cuobjdump); `is_compilation_error(error)`: whether an exception is its
    compiler's refusal (a `compile_error`), told without importing the compiler;
    `compile_error_subject`: what the verdict says did not compile; `preload_modules`: modules
    `python3 -m kforge_worker prime` compiles ahead (where installed)."""

    configure: Callable[[Device], None] = _nothing
    lists_built_kernels: bool = False
    is_compilation_error: Callable[[BaseException], bool] = _never
    compile_error_subject: str = ""
    preload_modules: Tuple[str, ...] = ()


def _no_jit_kernels(module_name: Optional[str]) -> List[str]:
    return []


@dataclass(frozen=True)
class TraceNames:
    """The names the guard tells this backend's kernels by. `jit_kernel_names(module)`: its
    just-in-time kernels alive in the process and defined in `module` (own-kernel);
    `jit_launch_suffix`: what the profiler may append to such a kernel's name after `_`;
    `jit_decorators`: qualified-name prefixes of the decorators that make a function one (static
    guard); `stream_calls`: calls that hand out a stream beside torch's (static guard's
    side-stream)."""

    jit_kernel_names: Callable[[Optional[str]], List[str]] = _no_jit_kernels
    jit_launch_suffix: Optional[Pattern[str]] = None
    jit_decorators: Tuple[str, ...] = ()
    stream_calls: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Clock:
    """How the timing routine (timing/timing.py) times a call on the backend's device:
    `device_events`, events recorded on the device's stream around the call and a device-wide
    synchronize (the device runs behind the host); else the host's clock alone.

    The routine does not ask the registry while it times: it captures its clock's functions at
    import, where `timing.TIMER_TARGETS` names them for the guard, and branches on the device's
    type, so that no data a candidate could rebind (guard/integrity.py watches functions, not data) decides how it
    is timed. tests/test_backends.py checks that the two agree."""

    device_events: bool


#: The host's clock: a call's work is done when it returns.
HOST_CLOCK = Clock(device_events=False)


def _no_tools() -> Dict[str, Optional[str]]:
    return {}


@dataclass(frozen=True)
class Doctor:
    """`tool_versions()`: the `hello` environment's fields of the tools the backend needs, each a
    version or None when absent (docs/worker-protocol.md, Start-up)."""

    tool_versions: Callable[[], Dict[str, Optional[str]]] = field(default=_no_tools)


@dataclass(frozen=True)
class Backend:
    """One backend: its name as requests spell it and one object per module of its folder."""

    name: str
    detect: Detect
    build: Build
    trace_names: TraceNames
    clock: Clock
    doctor: Doctor
