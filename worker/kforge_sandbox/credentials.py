"""Who the candidate runs as: an unprivileged uid with no passwd entry when the launcher is root,
its own user without capabilities inside a user namespace otherwise.

The uid is checked against the view the candidate gets: every folder it must read (the Python
installation, the worker's code, the bytecode cache) must be readable by a uid that owns nothing.
Where one is not (a Python installed under a private home that is not hidden), the candidate
stays uid 0 but loses every capability (bounding set, effective, permitted, inheritable, ambient),
and the report says so.
"""

import ctypes
import os
import stat
from typing import Iterable, Optional

from . import libc
from .syscalls import machine

SANDBOX_UID_BASE = 61000
SANDBOX_UID_COUNT = 4000

PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_SECUREBITS = 28
#: SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | its lock: uid 0 gains nothing on exec.
SECUREBITS_NO_ROOT = 0x1 | 0x2 | 0x4 | 0x8
CAPSET = {"x86_64": 126, "aarch64": 91}
LINUX_CAPABILITY_VERSION_3 = 0x20080522
LAST_CAPABILITY = 63


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def sandbox_uid(launcher_pid: int) -> int:
    """The uid (and gid) of the candidate started by the launcher with this pid: one per worker,
    in a range with no passwd entries, so two candidates do not share a uid either."""
    return SANDBOX_UID_BASE + launcher_pid % SANDBOX_UID_COUNT


def unreadable_for_others(paths: Iterable[str]) -> Optional[str]:
    """The first of `paths` (or a folder above it) that a uid owning nothing cannot reach, or None."""
    for path in paths:
        current = "/"
        for part in [part for part in os.path.abspath(path).split("/") if part]:
            current = os.path.join(current, part)
            try:
                mode = os.stat(current).st_mode
            except OSError:
                break
            needed = stat.S_IXOTH | (stat.S_IROTH if current == os.path.abspath(path) else 0)
            if stat.S_ISDIR(mode) and mode & needed != needed:
                return current
    return None


def give_to(uid: int, paths: Iterable[str], keep: Iterable[str]) -> None:
    """chown -R of the writable `paths` to uid:uid, leaving out the folders in `keep`."""
    kept = {os.path.abspath(path) for path in keep}
    for path in paths:
        for root, folders, files in os.walk(path):
            folders[:] = [name for name in folders if os.path.join(root, name) not in kept]
            os.chown(root, uid, uid, follow_symlinks=False)
            for name in files:
                os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)


def become(uid: int) -> None:
    """Root drops to uid:uid with no supplementary groups (every capability goes with it)."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def drop_capabilities() -> None:
    """Every capability of this process gone for good: bounding set, ambient, effective, permitted,
    inheritable; uid 0 regains none on exec. Raises OSError where the kernel refuses."""
    try:
        libc.prctl(PR_SET_SECUREBITS, SECUREBITS_NO_ROOT)
    except OSError:
        pass
    for capability in range(LAST_CAPABILITY + 1):
        try:
            libc.prctl(PR_CAPBSET_DROP, capability)
        except OSError:
            break
    try:
        libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    except OSError:
        pass
    header = CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (CapData * 2)()
    libc.syscall(CAPSET[machine()], ctypes.byref(header), ctypes.byref(data))
