"""The worker's own code, watched for changes made from inside its process (docs/hacks.md #5).

`timing.TIMER_TARGETS` names the timing and channel functions one by one (`take_targets` when the
role starts, `changed_targets` at each stage's end); the snapshot below covers
what a name list misses: every binding of every `kforge_worker` module that holds a function,
class or module (rebinding an imported name such as `timing_stage.time_calls`), and for every
such function, and every function of the worker's classes, the code object, defaults and closure
cells (a `__code__` swap keeps the function's identity). The channel's writer and reader closures
are watched the same way. Data bindings (caches, counters) are not watched: they change honestly.

A change is `timer-patched`. What this cannot see (a C function pointer rewritten with ctypes, a
patched GOT entry of clock_gettime, a restored swap) is why no time measured in this process is
believed on its own: the parent bounds it with its own clock (docs/timing.md).
"""

import sys
import types
from typing import Any, Dict, Iterable, List, Tuple

PACKAGE = "kforge_worker"

Snapshot = Dict[str, Tuple[Any, ...]]


def _cells(function: types.FunctionType) -> Tuple[int, ...]:
    ids = []
    for cell in function.__closure__ or ():
        try:
            ids.append(id(cell.cell_contents))
        except ValueError:
            ids.append(0)
    return tuple(ids)


def _function_state(function: types.FunctionType) -> Tuple[Any, ...]:
    return (id(function.__code__), id(function.__defaults__), id(function.__kwdefaults__), _cells(function))


def _watched(value: Any) -> bool:
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type))


def _own_modules() -> Iterable[Tuple[str, types.ModuleType]]:
    for name, module in list(sys.modules.items()):
        if module is not None and (name == PACKAGE or name.startswith(PACKAGE + ".")):
            yield name, module


def _record(snapshot: Snapshot, where: str, value: Any) -> None:
    snapshot[where] = (id(value),)
    if isinstance(value, types.FunctionType):
        snapshot[where + ".__code__"] = _function_state(value)
    elif isinstance(value, type) and value.__module__.startswith(PACKAGE):
        for attribute, member in list(vars(value).items()):
            function = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
            if isinstance(function, types.FunctionType):
                snapshot[f"{where}.{attribute}"] = (id(member),) + _function_state(function)


def take_snapshot(*closures: types.FunctionType) -> Snapshot:
    """The state of the worker's code now, and of `closures` (the channel's writer and reader)."""
    snapshot: Snapshot = {}
    for module_name, module in _own_modules():
        for name, value in list(vars(module).items()):
            if _watched(value):
                _record(snapshot, f"{module_name}.{name}", value)
    for index, function in enumerate(closures):
        snapshot[f"channel[{index}]"] = (id(function),) + _function_state(function)
    return snapshot


def changed(snapshot: Snapshot, *closures: types.FunctionType) -> List[str]:
    """Entries of `snapshot` that differ now (modules imported since are not compared)."""
    current = take_snapshot(*closures)
    return sorted(
        name
        for name, state in snapshot.items()
        if name in current
        and current[name] != state
        or name not in current
        and not name.endswith("__code__")
        and _was_module_binding(name)
    )


def _was_module_binding(name: str) -> bool:
    """A binding of a module that still exists (deleted since the snapshot)."""
    module_name, _, _ = name.rpartition(".")
    return module_name in sys.modules


def _resolve(root: Any, path: Tuple[str, ...], lenient: bool) -> Any:
    """The object at `path` from `root`: a module (its attributes read strictly unless `lenient`)
    or a module's name in sys.modules (absent attributes read as None; the module itself too when
    `lenient`)."""
    if isinstance(root, str):
        value = sys.modules.get(root) if lenient else sys.modules[root]
        for name in path:
            value = getattr(value, name, None)
        return value
    value = root
    for name in path:
        value = getattr(value, name, None) if lenient else getattr(value, name)
    return value


def take_targets(targets: Iterable[tuple]) -> Dict[str, Any]:
    """The objects of (name, root, path, lenient) targets (timing.TIMER_TARGETS), by name."""
    return {name: _resolve(root, path, lenient) for name, root, path, lenient in targets}


def changed_targets(snapshot: Dict[str, Any], targets: Iterable[tuple]) -> List[str]:
    """Names whose object is no longer the one in `snapshot`, sorted."""
    current = take_targets(targets)
    return sorted(name for name, target in snapshot.items() if current.get(name) is not target)
