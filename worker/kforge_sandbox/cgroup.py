"""A cgroup per worker: its whole process tree is counted (a fork bomb stops at `pids.max`) and
killed at the end, whichever session or process group the candidate moved its helpers to.

Where the host gives one: cgroup v2 (with `cgroup.kill`, Linux 5.14+, else each process killed in
turn) or the v1 `pids` hierarchy. None is needed for the tree to end when the worker does (the PID
namespace's end does that); the cgroup is the second layer and the bound on processes.
"""

import os
import signal
import time
from typing import Optional

V2_ROOTS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")
V1_PIDS_ROOT = "/sys/fs/cgroup/pids"
PARENT_NAME = "kforge"
#: Tasks (threads count) one worker's tree may hold: compilers, OpenMP and torch.compile pools.
PIDS_MAX = 8192


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read()


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _v2_root() -> Optional[str]:
    for root in V2_ROOTS:
        if os.path.exists(os.path.join(root, "cgroup.controllers")) and os.path.exists(
            os.path.join(root, "cgroup.procs")
        ):
            return root
    return None


class WorkerCgroup:
    """A cgroup made for one worker; `enter()` moves this process in, `end()` kills what is left
    and removes it."""

    def __init__(self, path: str, version: str, parent_procs: str):
        self.path = path
        self.version = version
        self._parent_procs = parent_procs

    @classmethod
    def create(cls, name: str) -> "WorkerCgroup":
        """A fresh cgroup `kforge/<name>`: under the v2 root where it has the pids controller, else
        under the v1 pids root, else under the v2 root without a bound. Raises OSError with the
        reasons when none can be written."""
        errors = []
        root = _v2_root()
        v2_pids = root is not None and "pids" in _read(os.path.join(root, "cgroup.controllers")).split()
        order = (
            ([(root, "v2")] if v2_pids else [])
            + ([(V1_PIDS_ROOT, "v1 pids")] if os.path.isdir(V1_PIDS_ROOT) else [])
            + ([(root, "v2")] if root is not None and not v2_pids else [])
        )
        for folder, version in order:
            try:
                return cls._make(folder, name, version)
            except OSError as error:
                errors.append(f"{version} at {folder}: {error.strerror or error}")
        raise OSError("; ".join(errors) or "no cgroup hierarchy is mounted")

    @classmethod
    def _make(cls, root: str, name: str, version: str) -> "WorkerCgroup":
        parent = os.path.join(root, PARENT_NAME)
        os.makedirs(parent, exist_ok=True)
        if version == "v2" and "pids" in _read(os.path.join(root, "cgroup.controllers")).split():
            for folder in (root, parent):
                try:
                    _write(os.path.join(folder, "cgroup.subtree_control"), "+pids")
                except OSError:
                    pass
        _sweep(parent)
        path = os.path.join(parent, name)
        os.mkdir(path)
        try:
            _write(os.path.join(path, "pids.max"), str(PIDS_MAX))
        except OSError:
            pass
        label = version + (" (pids.max)" if os.path.exists(os.path.join(path, "pids.max")) else "")
        return cls(path, label, os.path.join(root, "cgroup.procs"))

    def enter(self) -> None:
        """Moves this process (and so every child it starts afterwards) into the cgroup."""
        _write(os.path.join(self.path, "cgroup.procs"), str(os.getpid()))

    def end(self) -> None:
        """Leaves the cgroup, kills every process still in it, removes it. Never raises."""
        try:
            _write(self._parent_procs, str(os.getpid()))
        except OSError:
            pass
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            try:
                pids = [int(line) for line in _read(os.path.join(self.path, "cgroup.procs")).split()]
            except OSError:
                return
            if not pids:
                break
            if os.path.exists(os.path.join(self.path, "cgroup.kill")):
                try:
                    _write(os.path.join(self.path, "cgroup.kill"), "1")
                except OSError:
                    pass
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.01)
        try:
            os.rmdir(self.path)
        except OSError:
            pass


def name_for(pid: int) -> str:
    """The cgroup name of the launcher with this pid."""
    return f"worker-{pid}"


def _sweep(parent: str) -> None:
    """Removes the empty cgroups left by launchers that were killed before they could (their pid is
    gone); a cgroup with processes in it is never removed."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        if not name.startswith("worker-") or not name[7:].isdigit():
            continue
        try:
            os.kill(int(name[7:]), 0)
            continue
        except ProcessLookupError:
            pass
        except OSError:
            continue
        try:
            os.rmdir(os.path.join(parent, name))
        except OSError:
            pass
