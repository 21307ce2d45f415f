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
import resource
import signal
import socket
import sys
from dataclasses import dataclass, field
from typing import List

from . import cgroup, credentials, filesystem, listener, namespaces, seccomp
from .report import IsolationReport, set_current
from .syscalls import machine

ROLES = ("candidate", "reference", "probe")
PR_SET_PDEATHSIG = 1
#: Exit status of a worker that `--sandbox require` stopped because a layer is missing.
MISSING_LAYER_STATUS = 3
PRIVATE_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")
HIDDEN_ALWAYS = ("/run",)


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
    status = _read_status(status_read, child)
    if group is not None:
        group.end()
    _mirror(status)


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
        _prepare_namespace(options, report, entered)
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
    status = _reap_until(worker)
    os.write(status_write, status.encode() + b"\n")
    os._exit(0)


def namespaces_prctl_pdeathsig() -> None:
    from . import libc

    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _prepare_namespace(options: Options, report: IsolationReport, entered: List[str]) -> None:
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
        exposed=options.expose + _python_paths(options),
        private=list(PRIVATE_FOLDERS),
    )
    filesystem.attempt(lambda: filesystem.build(spec, with_proc="pid" in entered, report=report), report)


def _python_paths(options: Options, tools: bool = True) -> List[str]:
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


def _worker(options: Options, report: IsolationReport, launcher_pid: int) -> None:
    """The worker process: user, descriptors, no_new_privs, seccomp; then the role."""
    try:
        if options.role != "reference":
            _choose_user(options, report, launcher_pid)
        _keep_listener(options)
        os.closerange(listener.DESCRIPTOR + 1 if options.listener_fd >= 0 else 4, _descriptor_limit())
        report.descriptors = "0-3 and the hand-over listener" if options.listener_fd >= 0 else "0-3 only"
        if options.role != "reference":
            _seccomp(report)
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


def _descriptor_limit() -> int:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 65536


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
    blocked = credentials.unreadable_for_others(_python_paths(options, tools=False))
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


#: Set for a worker whose Unix socket rules are still to come (seccomp.seal_sockets): the machine's
#: architecture. The worker adds them once CUDA has started, before any untrusted code runs.
SEAL_VARIABLE = "KFORGE_SEAL_SOCKETS"


def _seccomp(report: IsolationReport) -> None:
    try:
        seccomp.install(machine(), "process")
        os.environ[SEAL_VARIABLE] = machine()
        report.seccomp = True
        report.no_new_privs = True
    except KeyError:
        report.lack("seccomp", f"no filter for this architecture ({machine()})")
        _no_new_privs(report)
    except OSError as error:
        report.lack("seccomp", f"the kernel refused the filter ({error.strerror})")
        _no_new_privs(report)


def _no_new_privs(report: IsolationReport) -> None:
    from . import libc

    try:
        libc.prctl(seccomp.PR_SET_NO_NEW_PRIVS, 1)
        report.no_new_privs = True
    except OSError as error:
        report.lack("no_new_privs", f"refused ({error.strerror})")


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


def _reap_until(worker: int) -> str:
    """Reaps every child (orphans land here) until the worker ends; its status as `exit N`/`signal S`."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return "exit 1"
        except InterruptedError:
            continue
        if pid == worker:
            if os.WIFSIGNALED(status):
                return f"signal {os.WTERMSIG(status)}"
            return f"exit {os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1}"


def _read_status(status_read: int, child: int) -> str:
    data = b""
    while True:
        try:
            chunk = os.read(status_read, 64)
        except InterruptedError:
            continue
        if not chunk:
            break
        data += chunk
    os.close(status_read)
    while True:
        try:
            _pid, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            status = 0
            break
    text = data.decode(errors="replace").strip()
    if text:
        return text
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit {os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1}"


def _mirror(status: str) -> None:
    """Ends the launcher as the worker ended: the same exit status, or the same signal."""
    kind, _, value = status.partition(" ")
    number = int(value) if value.isdigit() else 1
    if kind == "signal":
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(number)
