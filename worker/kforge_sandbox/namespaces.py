"""New namespaces for the worker: PID, mount, IPC, network, UTS; inside a user namespace when the
launcher is not root. `enter` tries the full set, then drops what the kernel refuses, one at a time.
"""

import fcntl
import os
import socket
import struct
from typing import List, Tuple

from . import libc
from .report import IsolationReport

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

#: In the order they are given up when the kernel refuses the whole set (least needed first).
OPTIONAL = (
    ("uts", CLONE_NEWUTS),
    ("ipc", CLONE_NEWIPC),
    ("network", CLONE_NEWNET),
    ("mount", CLONE_NEWNS),
    ("pid", CLONE_NEWPID),
)

SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _map_own_ids(uid: int, gid: int) -> None:
    """Identity uid/gid maps in a fresh user namespace (the only ones an unprivileged user may write)."""
    try:
        _write("/proc/self/setgroups", "deny")
    except FileNotFoundError:
        pass
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


def enter(wanted: Tuple[str, ...], report: IsolationReport) -> List[str]:
    """Unshares the `wanted` namespaces (names of OPTIONAL), in a user namespace when not root.

    Returns the names entered (also recorded in `report`, with each one refused in `missing`). The
    PID namespace applies to children started afterwards: the caller forks its init next.
    """
    flags = {name: flag for name, flag in OPTIONAL if name in wanted}
    as_root = os.geteuid() == 0
    uid, gid = os.getuid(), os.getgid()
    user_flag = 0 if as_root else CLONE_NEWUSER
    refused = {}
    while True:
        try:
            libc.unshare(user_flag | sum(flags.values()))
            break
        except OSError as error:
            if not flags:
                if user_flag:
                    report.lack(
                        "user namespace",
                        f"the kernel refused an unprivileged user namespace ({error.strerror});"
                        " run as root or allow them (sysctl kernel.unprivileged_userns_clone=1)",
                    )
                return []
            name = next(name for name, _ in OPTIONAL if name in flags)
            refused[name] = error.strerror
            del flags[name]
    if user_flag:
        _map_own_ids(uid, gid)
    entered = (["user"] if user_flag else []) + [name for name, _ in reversed(OPTIONAL) if name in flags]
    for name, why in refused.items():
        report.lack(f"{name} namespace", f"the kernel refused it ({why})")
    report.namespaces = entered
    return entered


def loopback_up() -> None:
    """Brings up `lo` in a new network namespace (it starts down); raises OSError when refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(probe.fileno(), SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe.fileno(), SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))
