"""`python3 -m kforge_worker prime DIR`: a bytecode cache for workers where the installed packages
have none.

Workers run with `sys.dont_write_bytecode` (no `__pycache__` next to problem files). Where torch was
installed without bytecode (`pip --no-compile`, images built with PYTHONDONTWRITEBYTECODE), every
worker then compiles each module it imports from source: on the H200 host, about 2,800 modules and
8-10 s of CPU per worker (docs/benchmarks/throughput.md). This command, run by the trusted parent
before any worker starts, checks whether the probe module (torch) has usable bytecode beside its
source; if not, it imports the workers' modules with `sys.pycache_prefix = DIR` and writing allowed,
so their bytecode lands in DIR, then makes DIR read-only. Workers started with
`PYTHONPYCACHEPREFIX=DIR` read it and never write there.

It prints one JSON line: `needed` (false: the installed bytecode serves, DIR is not to be used),
`prefix`, `modules`, `seconds`, `fingerprint`. A DIR primed for the same fingerprint (Python version,
probe module and its source's mtime) is reused without importing anything.
"""

import importlib
import importlib.util
import json
import os
import shutil
import stat
import sys
import time
from typing import Dict, List, Optional

from ..backends.registry import PRELOAD_MODULES

#: What workers import, in roughly the order they do (the roles, the extension builder, the
#: profiler, the backends' compilers where installed (backends/*/build.py), torch.compile's stack
#: for baselines).
DEFAULT_MODULES = (
    "torch", "numpy", "torch.utils.cpp_extension", "torch.profiler", "torch.utils.flop_counter",
    "torch.utils._python_dispatch", *PRELOAD_MODULES, "torch._dynamo", "torch._inductor.compile_fx",
    "kforge_worker.roles.reference_role", "kforge_worker.roles.candidate_role", "kforge_worker.timing.baselines",
    "kforge_worker.timing.roofline", "kforge_worker.guard.static_stage", "kforge_worker.roles.audit_command",
)
MARKER = "primed.json"


def _source_of(module: str) -> Optional[str]:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = getattr(spec, "origin", None) if spec else None
    return origin if origin and origin.endswith(".py") else None


def _has_bytecode_beside(source: str) -> bool:
    """Whether `source` has a pyc in its own __pycache__ that is not older than the source."""
    try:
        cached = importlib.util.cache_from_source(source)
        return os.stat(cached).st_mtime >= os.stat(source).st_mtime
    except (OSError, NotImplementedError, ValueError):
        return False


def fingerprint(probe: str, source: str) -> Dict[str, object]:
    return {"python": sys.version, "executable": sys.executable, "probe": probe, "source": source,
            "source_mtime_ns": os.stat(source).st_mtime_ns}


def _make_read_only(directory: str) -> int:
    files = 0
    for root, directories, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            os.chmod(path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
            files += 1
    for root, directories, _names in os.walk(directory, topdown=False):
        for name in directories:
            os.chmod(os.path.join(root, name), 0o555)
    return files


def _remove(directory: str) -> None:
    """Removes an earlier cache (made read-only by `_make_read_only`) before priming again."""
    if not os.path.isdir(directory):
        return
    for root, directories, _names in os.walk(directory):
        os.chmod(root, 0o755)
    shutil.rmtree(directory)


def prime(directory: str, modules: List[str]) -> Dict[str, object]:
    probe = modules[0]
    source = _source_of(probe)
    if source is None:
        return {"needed": False, "prefix": None, "reason": f"{probe} is not installed as Python source"}
    if _has_bytecode_beside(source):
        return {"needed": False, "prefix": None, "reason": f"{probe} has bytecode beside its source"}
    wanted = fingerprint(probe, source)
    marker = os.path.join(directory, MARKER)
    try:
        with open(marker) as file:
            previous = json.load(file)
        if previous.get("fingerprint") == wanted:
            return {**previous, "reused": True}
    except (OSError, ValueError):
        pass
    started = time.perf_counter()
    _remove(directory)
    os.makedirs(directory, exist_ok=True)
    sys.pycache_prefix = os.path.abspath(directory)
    sys.dont_write_bytecode = False
    failed = {}
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as error:  # noqa: BLE001 - an optional module (a backend's compiler) may be missing
            failed[module] = f"{type(error).__name__}: {error}"
    record = {"needed": True, "prefix": os.path.abspath(directory), "modules": len(sys.modules), "failed": failed,
              "seconds": round(time.perf_counter() - started, 3), "fingerprint": wanted, "reused": False}
    sys.dont_write_bytecode = True
    with open(marker, "w") as file:
        json.dump(record, file)
    record["files"] = _make_read_only(directory)
    return record


def main(arguments: List[str]) -> int:
    if not arguments or arguments[0].startswith("-"):
        print("usage: python3 -m kforge_worker prime DIR [--modules a,b,c]", file=sys.stderr)
        return 2
    directory = arguments[0]
    modules = list(DEFAULT_MODULES)
    if len(arguments) == 3 and arguments[1] == "--modules" and arguments[2]:
        modules = arguments[2].split(",")
    elif len(arguments) != 1:
        print("usage: python3 -m kforge_worker prime DIR [--modules a,b,c]", file=sys.stderr)
        return 2
    print(json.dumps(prime(directory, modules)))
    return 0
