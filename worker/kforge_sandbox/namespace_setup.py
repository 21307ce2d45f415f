"""What the init prepares in the new namespaces before it forks the worker (launch.py): loopback,
the host name, and the candidate's view of the filesystem with what the worker must still read."""

import os
import socket
import sys
from typing import List

from . import filesystem, namespaces
from .options import Options
from .report import IsolationReport

PRIVATE_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")
HIDDEN_ALWAYS = ("/run",)


def prepare_namespace(options: Options, report: IsolationReport, entered: List[str]) -> None:
    if "pid" not in entered:
        report.lack(
            "process teardown",
            "no PID namespace: helpers that leave the process group can outlive the worker"
            + ("" if report.cgroup else " (and no cgroup either)"),
        )
    if "network" in entered:
        try:
            namespaces.loopback_up()
            report.network = "loopback only"
        except OSError as error:
            report.network = "none (loopback down)"
            report.lack("loopback", f"could not bring lo up ({error.strerror})")
    else:
        report.lack("network", "no network namespace: the candidate can open connections")
    if "uts" in entered:
        try:
            socket.sethostname("kforge-sandbox")
        except OSError:
            pass
    if options.role == "reference":
        report.filesystem = "unchanged (reference role)"
        if "mount" in entered and "pid" in entered:
            filesystem.attempt(lambda: filesystem.mount_fresh_proc(report), report)
        return
    if "mount" not in entered:
        report.lack("filesystem view", "no mount namespace: the candidate sees the filesystem as its user does")
        return
    spec = filesystem.ViewSpec(
        writable=options.writable,
        read_only=options.read_only,
        hidden=options.hide + [path for path in HIDDEN_ALWAYS if path not in options.hide],
        exposed=options.expose + python_paths(options),
        private=list(PRIVATE_FOLDERS),
    )
    filesystem.attempt(lambda: filesystem.build(spec, with_proc="pid" in entered, report=report), report)


def python_paths(options: Options, tools: bool = True) -> List[str]:
    """What the worker must still read when a folder above it is hidden: the interpreter, its
    import path, the worker's code, the bytecode cache; with `tools`, also the folders on PATH and
    LD_LIBRARY_PATH and CUDA_HOME (compilers, nvcc, the driver's libraries)."""
    candidates = [os.path.dirname(os.path.realpath(sys.executable)), sys.prefix, sys.exec_prefix]
    candidates += [entry for entry in sys.path if entry]
    for folder in (options.pycache_prefix, options.worker_dir):
        if folder:
            candidates.append(folder)
    if tools:
        candidates += [entry for entry in os.environ.get("PATH", "").split(":") if entry]
        candidates += [entry for entry in os.environ.get("LD_LIBRARY_PATH", "").split(":") if entry]
        if os.environ.get("CUDA_HOME"):
            candidates.append(os.environ["CUDA_HOME"])
    seen = []
    for path in candidates:
        path = os.path.abspath(path)
        if os.path.isdir(path) and path not in seen:
            seen.append(path)
    return seen
