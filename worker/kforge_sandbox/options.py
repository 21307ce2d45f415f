"""The launcher's command line (launch.py): the role and the folders of the worker's view."""

import os
import sys
from dataclasses import dataclass, field
from typing import List

ROLES = ("candidate", "reference", "probe")
#: Exit status of a worker that `--sandbox require` stopped because a layer is missing.
MISSING_LAYER_STATUS = 3


@dataclass
class Options:
    role: str = ""
    writable: List[str] = field(default_factory=list)
    read_only: List[str] = field(default_factory=list)
    hide: List[str] = field(default_factory=list)
    expose: List[str] = field(default_factory=list)
    pycache_prefix: str = ""
    worker_dir: str = ""
    sandbox: str = "on"
    handover_socket: str = ""
    #: The hand-over listener's descriptor once bound (candidate role with --handover-socket), else -1.
    listener_fd: int = -1


def parse(argv: List[str]) -> Options:
    """Options from the command line; exits with status 2 and a message on a bad one."""
    options = Options()
    lists = {
        "--writable": options.writable,
        "--read-only": options.read_only,
        "--hide": options.hide,
        "--expose": options.expose,
    }
    items = list(argv)
    while items:
        item = items.pop(0)
        if item in lists or item in ("--pycache-prefix", "--sandbox", "--worker-dir", "--handover-socket"):
            if not items:
                _usage(f"{item} needs a value")
            value = items.pop(0)
            if item in lists:
                lists[item].append(os.path.abspath(value))
            elif item == "--pycache-prefix":
                options.pycache_prefix = os.path.abspath(value)
            elif item == "--worker-dir":
                options.worker_dir = os.path.abspath(value)
            elif item == "--handover-socket":
                options.handover_socket = os.path.abspath(value)
            elif value not in ("on", "off", "require"):
                _usage(f"expected --sandbox to be on, off or require, got `{value}`")
            else:
                options.sandbox = value
        elif item in ROLES and not options.role:
            options.role = item
        else:
            _usage(f"unexpected argument `{item}`")
    if not options.role:
        _usage("a role is needed")
    return options


def _usage(message: str) -> None:
    print(
        f"kforge sandbox: {message}; usage: kforge_bootstrap.py [--writable DIR]... [--read-only DIR]... "
        f"[--hide DIR]... [--expose DIR]... [--pycache-prefix DIR] [--worker-dir DIR] [--handover-socket PATH] "
        f"[--sandbox on|off|require] "
        f"{'|'.join(ROLES)}",
        file=sys.stderr,
    )
    raise SystemExit(2)
