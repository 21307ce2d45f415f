"""`python3 -I -B -u kforge_bootstrap.py [options] ROLE`: a worker inside the sandbox.

Three processes:

- the **launcher** (this process, the one the parent started and signals): puts itself in a fresh
  cgroup, unshares the namespaces, forks the init, then only waits and passes the worker's exit
  status on (the same exit code, or the same signal);
- the **init** (PID 1 of the new PID namespace, dies with the launcher through PR_SET_PDEATHSIG):
  brings up loopback, builds the filesystem view, forks the worker and reaps orphans; when the
  worker ends, it exits and the kernel kills every process left in the namespace;
- the **worker**: chooses its user, closes every descriptor beyond 0-3, sets no_new_privs, installs
  the seccomp filter, and runs `kforge_worker` (candidate or reference) in this same interpreter.

Options: `--writable DIR` (the scratch folder), `--read-only DIR` (its `in` folder), `--hide DIR`
(the cache root, the parent's home), `--expose DIR` (read-only inside a hidden one: the bytecode
cache, the build staging folder), `--pycache-prefix DIR`, `--sandbox on|off|require`,
`--handover-socket PATH` (the candidate's hand-over listener, bound there before any namespace:
listener.py), and `--worker-dir DIR` (handled by kforge_bootstrap.py: the folder holding
`kforge_worker`).
The report reaches the worker as the `KFORGE_ISOLATION` variable (JSON), which the worker removes
from its environment before `hello`.
The reference role gets the namespaces and the cgroup (the candidate cannot see it) but keeps the
parent's user and filesystem. `probe` sets up a candidate's sandbox and prints its report.
"""

import fcntl
import importlib.util
import json
import os
import signal
import sys
from typing import List

from . import cgroup, credentials, listener, namespaces
from .confinement import descriptor_limit, install_seccomp
from .exit_status import mirror, reap_until, read_status
from .namespace_setup import prepare_namespace, python_paths
from .options import MISSING_LAYER_STATUS, Options, parse
from .report import IsolationReport, set_current

PR_SET_PDEATHSIG = 1


def main(argv: List[str]) -> None:
    options = parse(argv)
    report = IsolationReport(role="candidate" if options.role == "probe" else options.role)
    report.python = "isolated (-I)" if sys.flags.isolated else "not isolated: started without -I"
    _bind_listener(options)
    if options.sandbox == "off" or not sys.platform.startswith("linux"):
        report.enabled = False
        report.lack(
            "sandbox", "turned off (KFORGE_SANDBOX=0)" if options.sandbox == "off" else f"not on Linux ({sys.platform})"
        )
        _run(options, report)
    group = _cgroup(report)
    wanted = ("pid", "mount", "ipc", "network", "uts")
    entered = namespaces.enter(wanted, report)
    status_read, status_write = (_high(descriptor) for descriptor in os.pipe())
    launcher_pid = os.getpid()
    child = os.fork()
    if child == 0:
        os.close(status_read)
        _init(options, report, entered, status_write, launcher_pid)
    os.close(status_write)
    _close_listener(options)
    _quiet_own_descriptors()
    status = read_status(status_read, child)
    if group is not None:
        group.end()
    mirror(status)


def _high(descriptor: int) -> int:
    """The descriptor moved above the protocol's (0-3), so that quieting those never touches it."""
    moved = fcntl.fcntl(descriptor, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(descriptor)
    return moved


def _cgroup(report: IsolationReport):
    try:
        group = cgroup.WorkerCgroup.create(cgroup.name_for(os.getpid()))
        group.enter()
        report.cgroup = group.version
        return group
    except OSError as error:
        report.lack("cgroup", f"none could be made ({error})")
        return None


def _quiet_own_descriptors() -> None:
    """The launcher keeps no end of the protocol: stdin and fd 3 point at /dev/null here."""
    null = os.open(os.devnull, os.O_RDWR)
    for descriptor in (0, 3):
        try:
            os.dup2(null, descriptor)
        except OSError:
            pass
    os.close(null)


def _init(options: Options, report: IsolationReport, entered: List[str], status_write: int, launcher_pid: int) -> None:
    """PID 1 of the namespace: the view, then the worker; exits when the worker does."""
    try:
        if "pid" in entered:
            try:
                namespaces_prctl_pdeathsig()
            except OSError as error:
                report.lack("teardown", f"PR_SET_PDEATHSIG refused ({error.strerror})")
        prepare_namespace(options, report, entered)
    except BaseException as error:  # the view could not be made: the worker must not run without it
        print(f"kforge sandbox: {error}", file=sys.stderr)
        os.write(status_write, b"exit 1\n")
        os._exit(1)
    worker = os.fork()
    if worker == 0:
        os.close(status_write)
        _worker(options, report, launcher_pid)
    _close_listener(options)
    for descriptor in (0, 3):
        try:
            os.close(descriptor)
        except OSError:
            pass
    status = reap_until(worker)
    os.write(status_write, status.encode() + b"\n")
    os._exit(0)


def namespaces_prctl_pdeathsig() -> None:
    from . import libc

    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _worker(options: Options, report: IsolationReport, launcher_pid: int) -> None:
    """The worker process: user, descriptors, no_new_privs, seccomp; then the role."""
    try:
        if options.role != "reference":
            _choose_user(options, report, launcher_pid)
        _keep_listener(options)
        os.closerange(listener.DESCRIPTOR + 1 if options.listener_fd >= 0 else 4, descriptor_limit())
        report.descriptors = "0-3 and the hand-over listener" if options.listener_fd >= 0 else "0-3 only"
        if options.role != "reference":
            install_seccomp(report)
        if options.sandbox == "require" and report.missing:
            print(
                "kforge sandbox: isolation was required (KFORGE_SANDBOX=require) but these layers are missing: "
                + "; ".join(report.missing),
                file=sys.stderr,
            )
            os._exit(MISSING_LAYER_STATUS)
    except BaseException as error:
        print(f"kforge sandbox: {error}", file=sys.stderr)
        os._exit(1)
    _run(options, report)


def _bind_listener(options: Options) -> None:
    """The candidate's hand-over listener, bound before any namespace (so the judge, outside them,
    reaches it at its path); a failure leaves the hand-over to the pipe."""
    if options.role != "candidate" or not options.handover_socket:
        return
    try:
        options.listener_fd = _high(listener.listen(options.handover_socket).detach())
    except OSError as error:
        print(f"kforge sandbox: no hand-over socket ({error.strerror}); outputs will go by pipe", file=sys.stderr)
        return
    os.environ[listener.LISTENER_VARIABLE] = str(options.listener_fd)


def _keep_listener(options: Options) -> None:
    """Moves the listener to listener.DESCRIPTOR, where the worker's variable says it is."""
    if options.listener_fd < 0:
        return
    if options.listener_fd != listener.DESCRIPTOR:
        os.dup2(options.listener_fd, listener.DESCRIPTOR, inheritable=False)
        os.close(options.listener_fd)
        options.listener_fd = listener.DESCRIPTOR
    os.environ[listener.LISTENER_VARIABLE] = str(listener.DESCRIPTOR)


def _close_listener(options: Options) -> None:
    """The launcher and the init keep no copy: once the worker is gone, the socket refuses the judge."""
    if options.listener_fd >= 0:
        os.close(options.listener_fd)
        options.listener_fd = -1


def _choose_user(options: Options, report: IsolationReport, launcher_pid: int) -> None:
    if os.geteuid() != 0 or "user" in report.namespaces:
        try:
            credentials.drop_capabilities()
        except OSError as error:
            report.lack("capabilities", f"could not drop them ({error.strerror})")
        report.user = f"uid {os.getuid()} (the parent's own user" + (
            ", in a user namespace)" if "user" in report.namespaces else ")"
        )
        if "user" not in report.namespaces:
            report.lack(
                "user", "the candidate runs as the parent's user (no user namespace): it can reach what that user can"
            )
        return
    uid = credentials.sandbox_uid(launcher_pid)
    blocked = credentials.unreadable_for_others(python_paths(options, tools=False))
    if blocked is None:
        credentials.give_to(uid, options.writable, keep=options.read_only)
        credentials.become(uid)
        # No passwd entry: getpass.getuser() (torch.compile's and Triton's cache paths, read when
        # torch._dynamo is first imported) falls back to the environment, so the name is set there.
        os.environ["USER"] = os.environ["LOGNAME"] = f"kforge-{uid}"
        report.user = f"uid {uid} (no passwd entry)"
        report.uid = uid
        return
    credentials.drop_capabilities()
    report.user = "uid 0 without capabilities"
    report.lack(
        "user",
        f"stays uid 0 (without any capability): {blocked} is not readable by an unprivileged uid; "
        "make it world-readable or install Python and kforge under a readable path",
    )


#: The variable that carries the report to the worker's `hello`.
REPORT_VARIABLE = "KFORGE_ISOLATION"


def _run(options: Options, report: IsolationReport) -> None:
    set_current(report)
    if options.role == "probe":
        print(json.dumps(report.as_message()), flush=True)
        os._exit(0)
    os.environ[REPORT_VARIABLE] = json.dumps(report.as_message())
    import runpy

    # Exactly what `python3 -m kforge_worker ROLE` would run, with the worker folder first on the path.
    sys.argv = ["kforge_worker", options.role]
    try:
        spec = importlib.util.find_spec("kforge_worker")
    except ImportError:
        spec = None
    if spec is None:
        print(
            f"{sys.executable}: No module named kforge_worker (looked in {options.worker_dir})",
            file=sys.stderr,
            flush=True,
        )
        os._exit(1)
    runpy.run_module("kforge_worker", run_name="__main__", alter_sys=True)
    os._exit(0)
