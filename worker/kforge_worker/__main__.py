"""`python3 -m kforge_worker reference|candidate` — docs/worker-protocol.md;
`python3 -m kforge_worker audit PROBLEM [...]` (audit_command.py);
`python3 -m kforge_worker estimate PROBLEM [...]` (estimate_command.py);
`python3 -m kforge_worker constants PROBLEM [...]` (constants_command.py, without torch); and
`python3 -m kforge_worker prime DIR` (bytecode_cache.py).

Exit status of a role: 0 after the role finished or wrote a `failure` message; 2 when the parent
broke the protocol (message on stderr); 1 on a fault of the worker itself (traceback on stderr).
The process ends with os._exit so that threads a candidate left behind cannot keep it alive.
"""

import faulthandler
import os
import sys

ROLES = ("reference", "candidate")
PROFILE_VARIABLE = "KFORGE_WORKER_PROFILE"
PROFILE_MEMORY_VARIABLE = "KFORGE_WORKER_PROFILE_MEMORY"
#: The sandbox launcher's report (kforge_sandbox/launch.py), JSON; it goes into `hello`.
ISOLATION_VARIABLE = "KFORGE_ISOLATION"


def _harden_import_path() -> None:
    """No bytecode next to problem files, and no module shadowing from the working directory."""
    sys.dont_write_bytecode = True
    cwd = os.getcwd()
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path[:] = [
        entry
        for entry in sys.path
        if entry not in ("", ".") and (os.path.abspath(entry) != cwd or entry == package_parent)
    ]


def _exit(status: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


def main(argv) -> None:
    if len(argv) >= 2:
        _command(argv[1], list(argv[2:]))
    if len(argv) != 2 or argv[1] not in ROLES:
        print(
            f"usage: python3 -m kforge_worker {'|'.join(ROLES)} | audit PROBLEM [--preset P] [--atol A --rtol R]",
            file=sys.stderr,
        )
        _exit(2)
    role = argv[1]
    # A fatal signal (a candidate's SIGSEGV) prints the Python stack on stderr before the process
    # dies of it as before: the verdict keeps its signal, the diagnostics gain where it happened.
    faulthandler.enable(file=sys.stderr, all_threads=True)
    _harden_import_path()
    from .device.memory_usage import steady_host_allocator
    from .protocol.channel import ProtocolError, open_channel

    steady_host_allocator()

    try:
        channel = open_channel()
    except ProtocolError as error:
        print(f"kforge_worker: {error}", file=sys.stderr)
        _exit(2)
    try:
        _profiled(role, channel)
    except ProtocolError as error:
        print(f"kforge_worker: protocol error: {error}", file=sys.stderr)
        _exit(2)
    except BaseException:
        import traceback

        traceback.print_exc()
        _exit(1)
    _exit(0)


def _command(name: str, args: list) -> None:
    """Runs the command `name` (audit, estimate, describe, constants, prime) with `args` and exits;
    returns for any other name (a role, or a misuse)."""
    if name == "audit":
        _harden_import_path()
        from .roles.audit_command import main as audit_main

        _exit(_status(audit_main, args))
    if name == "estimate":
        _harden_import_path()
        from .roles.estimate_command import main as estimate_main

        _exit(_status(estimate_main, args))
    if name == "describe":
        _harden_import_path()
        from .problem.problem_folder import main as describe_main

        _exit(describe_main(args))
    if name == "constants":
        _harden_import_path()
        from .roles.constants_command import main as constants_main

        _exit(constants_main(args))
    if name == "prime":
        _harden_import_path()
        from .build.bytecode_cache import main as prime_main

        _exit(prime_main(args))


def _status(command_main, args: list) -> int:
    """The exit status of an argparse command: what it returns, or the code it exits with."""
    try:
        return command_main(args)
    except SystemExit as exit_request:
        return exit_request.code if isinstance(exit_request.code, int) else 2


def _profiled(role: str, channel) -> None:
    """Serves the role; with `KFORGE_WORKER_PROFILE=DIR`, under the sampling profiler
    (sampling_profile.py), its stacks and summary written to DIR at the end (a diagnostic for people
    timing the worker, off by default; the variables are removed before any problem or candidate
    code runs). With `KFORGE_WORKER_PROFILE_MEMORY=1` as well, on a GPU, the CUDA allocator's history
    is recorded and a snapshot written at the end of every stage. Where DIR cannot be written, the
    files go to `kforge-profile` in the worker's own temporary folder, inside the evaluation's
    scratch folder, from which the parent copies them into DIR; a line on stderr says so (a
    sandboxed candidate is given that folder as DIR: its private /tmp would take and lose them)."""
    directory = os.environ.pop(PROFILE_VARIABLE, None)
    memory = os.environ.pop(PROFILE_MEMORY_VARIABLE, "") not in ("", "0")
    if not directory:
        _serve(role, channel)
        return
    from .protocol import sampling_profile

    usable = sampling_profile.writable_directory(directory)
    if usable != directory:
        print(
            f"kforge_worker: {PROFILE_VARIABLE}={directory} cannot be written from this {role} worker; "
            f"its profile goes to {usable}",
            file=sys.stderr,
        )
    sampler = sampling_profile.start(usable, role, memory=memory)
    try:
        _serve(role, channel)
    finally:
        sampler.stop()
        sampler.write()


def _seal_sockets(isolation) -> None:
    """Adds the sandbox's Unix socket rules (kforge_sandbox/seccomp.py) on every thread, after CUDA
    has started (the driver opens sockets of its own as it starts) and before `hello`, so before
    any problem or candidate code runs. A kernel that refuses is named in the isolation report."""
    architecture = os.environ.pop("KFORGE_SEAL_SOCKETS", None)
    if not architecture:
        return
    import torch

    torch.cuda.is_available()  # starts the driver (cuInit) where there is one; else a no-op
    from kforge_sandbox import seccomp

    try:
        seccomp.seal_sockets(architecture)
    except (OSError, KeyError) as error:
        if isolation is not None:
            isolation.setdefault("missing", []).append(f"unix sockets: the kernel refused their filter ({error})")


def _isolation_report():
    """The sandbox's report, removed from the environment; None when the worker was started without
    the launcher (or the value is not a JSON object)."""
    import json

    text = os.environ.pop(ISOLATION_VARIABLE, None)
    if not text:
        return None
    try:
        report = json.loads(text)
    except ValueError:
        return None
    return report if isinstance(report, dict) else None


def _serve(role: str, channel) -> None:
    from .protocol.channel import ProtocolError
    from .protocol.environment import collect_environment
    from .roles.warm_start import WARM_CONTEXT_VARIABLE, WARM_DEVICE_VARIABLE, warm_up
    from .protocol.errors import StageFailure

    isolation = _isolation_report()
    warm_device = os.environ.pop(WARM_DEVICE_VARIABLE, None)
    make_context = os.environ.pop(WARM_CONTEXT_VARIABLE, "1") != "0"
    warm_index = None
    if warm_device:
        try:
            warm_index = warm_up(warm_device, role, make_context)
        except ValueError as error:
            raise ProtocolError(str(error)) from error
    _seal_sockets(isolation)
    if role == "candidate":
        from .protocol.handover_socket import take_listener

        take_listener()
    environment = collect_environment(warm_index)
    if isolation is not None:
        environment["isolation"] = isolation
    channel.send("hello", role=role, pid=os.getpid(), environment=environment)
    message = channel.receive()
    if message is None:
        return
    from .protocol.fault_report import device_type_of, memory_grant, report_exception, report_failure
    from .protocol.machine_fault import MachineFault

    device_type = device_type_of(message)
    memory_grant(message)  # validated now; read again at the end (`continue` may set it)
    try:
        if role == "reference":
            from .roles.reference_role import run_reference

            run_reference(channel, message)
        else:
            from .roles.candidate_role import run_candidate

            run_candidate(channel, message)
    except StageFailure as failure:
        kind, fields = report_failure(role, failure, device_type, memory_grant(message))
        channel.send(kind, **fields)
    except MachineFault as fault:
        channel.send("fault", **fault.message_fields(fault.stage))
    except ProtocolError:
        raise
    except Exception as error:  # out of memory or a full disk outside the stages' own classification
        report = report_exception(role, error, device_type, memory_grant(message))
        if report is None:
            raise
        kind, fields = report
        channel.send(kind, **fields)


if __name__ == "__main__":
    main(sys.argv)
