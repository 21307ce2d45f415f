"""The worker's own confinement, after its user is chosen: the seccomp filter (or at least
no_new_privs) and the limit of the descriptors it closes (launch.py)."""

import os
import resource

from . import seccomp
from .report import IsolationReport
from .syscalls import machine

#: Set for a worker whose Unix socket rules are still to come (seccomp.seal_sockets): the machine's
#: architecture. The worker adds them once CUDA has started, before any untrusted code runs.
SEAL_VARIABLE = "KFORGE_SEAL_SOCKETS"


def install_seccomp(report: IsolationReport) -> None:
    try:
        seccomp.install(machine(), "process")
        os.environ[SEAL_VARIABLE] = machine()
        report.seccomp = True
        report.no_new_privs = True
    except KeyError:
        report.lack("seccomp", f"no filter for this architecture ({machine()})")
        set_no_new_privs(report)
    except OSError as error:
        report.lack("seccomp", f"the kernel refused the filter ({error.strerror})")
        set_no_new_privs(report)


def set_no_new_privs(report: IsolationReport) -> None:
    from . import libc

    try:
        libc.prctl(seccomp.PR_SET_NO_NEW_PRIVS, 1)
        report.no_new_privs = True
    except OSError as error:
        report.lack("no_new_privs", f"refused ({error.strerror})")


def descriptor_limit() -> int:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 65536
