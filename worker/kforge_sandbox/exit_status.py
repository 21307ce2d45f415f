"""How the worker's end travels up: the init reaps until the worker ends and writes its status to
the launcher, which ends as the worker did (the same exit status, or the same signal)."""

import os
import resource
import signal


def reap_until(worker: int) -> str:
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


def read_status(status_read: int, child: int) -> str:
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


def mirror(status: str) -> None:
    """Ends the launcher as the worker ended: the same exit status, or the same signal."""
    kind, _, value = status.partition(" ")
    number = int(value) if value.isdigit() else 1
    if kind == "signal":
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(number)
