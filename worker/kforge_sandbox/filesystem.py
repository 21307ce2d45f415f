"""The candidate's view of the filesystem, built in its own mount namespace.

Everything mounted becomes read-only; the folders in `hidden` disappear under an empty tmpfs;
`private` folders (/tmp, /var/tmp, /dev/shm) get a fresh tmpfs of their own; `exposed` paths
(inside hidden or private ones: the Python installation, the worker's code, the bytecode cache)
come back read-only; `writable` paths (the evaluation's scratch folder) come back read-write and
`read_only` paths (the scratch's `in` folder) read-only on top of them. /proc is mounted afresh
for the new PID namespace, with /proc/sys and its kin read-only.

Paths are bound from descriptors opened before anything was hidden (`/proc/self/fd/N`), so a
path that a tmpfs covers can still be brought back.
"""

import ctypes
import os
import stat
from dataclasses import dataclass, field
from typing import Callable, Dict, List

from . import libc
from .report import IsolationReport

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_NOATIME = 0x400
MS_NODIRATIME = 0x800
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MS_RELATIME = 0x200000
CLONE_NEWNS = 0x00020000

ST_TO_MS = {0x2: MS_NOSUID, 0x4: MS_NODEV, 0x8: MS_NOEXEC, 0x400: MS_NOATIME, 0x800: MS_NODIRATIME, 0x1000: MS_RELATIME}

SYS_MOUNT_SETATTR = 442
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1

#: /proc entries that stay read-only even though /proc itself is mounted afresh (host settings).
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus")

#: Size bound of each private tmpfs (memory-backed).
PRIVATE_TMPFS_SIZE = "25%"


@dataclass
class ViewSpec:
    writable: List[str] = field(default_factory=list)
    read_only: List[str] = field(default_factory=list)
    hidden: List[str] = field(default_factory=list)
    exposed: List[str] = field(default_factory=list)
    private: List[str] = field(default_factory=list)


class MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _kept_flags(path: str) -> int:
    """The mount flags of `path` that a remount must keep (a user namespace may not clear them)."""
    flags = os.statvfs(path).f_flag
    return sum(ms for st, ms in ST_TO_MS.items() if flags & st)


def _all_read_only() -> None:
    """Every mount read-only: one recursive mount_setattr (Linux 5.12+), else a remount per mount."""
    attributes = MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    try:
        libc.syscall(
            SYS_MOUNT_SETATTR,
            ctypes.c_int(AT_FDCWD),
            ctypes.c_char_p(b"/"),
            ctypes.c_uint(AT_RECURSIVE),
            ctypes.byref(attributes),
            ctypes.c_size_t(ctypes.sizeof(attributes)),
        )
        return
    except OSError:
        pass
    with open("/proc/self/mountinfo") as mountinfo:
        points = [line.split()[4].encode().decode("unicode_escape") for line in mountinfo]
    failed = []
    for point in points:
        try:
            libc.mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | _kept_flags(point))
        except OSError as error:
            failed.append(f"{point} ({error.strerror})")
    if "/" in [point for point in failed]:
        raise OSError(f"could not make / read-only: {failed}")
    if failed:
        raise PartialReadOnly(failed)


class PartialReadOnly(Exception):
    """Some mounts (listed) stayed writable."""


def _depth(path: str) -> int:
    return len([part for part in path.split("/") if part])


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _bind(descriptor: int, target: str, read_only: bool) -> None:
    if stat.S_ISDIR(os.fstat(descriptor).st_mode):
        os.makedirs(target, exist_ok=True)
    elif not os.path.exists(target):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o444))
    libc.mount(f"/proc/self/fd/{descriptor}", target, None, MS_BIND | MS_REC)
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | _kept_flags(target)
    libc.mount(None, target, None, (flags | MS_RDONLY) if read_only else (flags & ~MS_RDONLY))


def attempt(step: Callable[[], None], report: IsolationReport) -> bool:
    """Runs `step` (which changes mounts) in a mount namespace of its own; where it raises, goes back
    to the namespace before it (nothing half-made stays) and records the view as missing."""
    saved = os.open("/proc/self/ns/mnt", os.O_RDONLY)
    try:
        libc.unshare(CLONE_NEWNS)
        try:
            step()
            return True
        except OSError as error:
            libc.setns(saved, CLONE_NEWNS)
            report.filesystem = "unchanged"
            report.lack(
                "filesystem view", f"could not be built ({error}); the candidate sees the filesystem as its user does"
            )
            return False
    except OSError as error:
        report.lack("filesystem view", f"no mount namespace of its own ({error.strerror})")
        return False
    finally:
        os.close(saved)


def mount_fresh_proc(report: IsolationReport) -> None:
    """A /proc of this PID namespace (only its own processes listed), host settings read-only."""
    libc.mount(None, "/", None, MS_REC | MS_PRIVATE)
    try:
        libc.mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        for path in PROC_READ_ONLY:
            if os.path.exists(path):
                libc.mount(path, path, None, MS_BIND | MS_REC)
                libc.mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | _kept_flags(path))
    except OSError as error:
        report.lack(
            "/proc",
            f"could not mount a /proc of the new PID namespace ({error.strerror}): the host's "
            "processes stay listed there",
        )


def build(spec: ViewSpec, with_proc: bool, report: IsolationReport) -> None:
    """Builds the view in this process's (new, privileged) mount namespace. Raises OSError when the
    view cannot be made at all; records partial failures in `report.missing`."""
    libc.mount(None, "/", None, MS_REC | MS_PRIVATE)
    descriptors: Dict[str, int] = {}
    for path in spec.writable + spec.read_only + spec.exposed:
        if path not in descriptors and os.path.exists(path):
            descriptors[path] = os.open(path, os.O_PATH)
    try:
        _all_read_only()
        report.filesystem = "read-only view"
    except PartialReadOnly as partial:
        report.filesystem = "read-only view (with exceptions)"
        report.lack("read-only filesystem", f"these mounts stayed writable: {', '.join(partial.args[0])}")
    if with_proc:
        mount_fresh_proc(report)
    covers = sorted(
        {(path, "hidden") for path in spec.hidden if os.path.isdir(path)}
        | {(path, "private") for path in spec.private if os.path.isdir(path)},
        key=lambda item: _depth(item[0]),
    )
    covered = []
    for path, kind in covers:
        if not os.path.isdir(path):
            continue
        options = "mode=0755,size=1m" if kind == "hidden" else f"mode=1777,size={PRIVATE_TMPFS_SIZE}"
        libc.mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, options)
        covered.append((path, kind))
    binds = (
        [(path, "exposed") for path in spec.exposed]
        + [(path, "writable") for path in spec.writable]
        + [(path, "read_only") for path in spec.read_only]
    )
    for path, kind in sorted(binds, key=lambda item: _depth(item[0])):
        if path not in descriptors:
            continue
        if kind == "exposed" and not any(_inside(path, folder) for folder, _ in covered):
            continue
        _bind(descriptors[path], path, read_only=kind != "writable")
    for path, kind in covered:
        if kind == "hidden":
            libc.mount(None, path, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    for descriptor in descriptors.values():
        os.close(descriptor)
