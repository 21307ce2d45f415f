"""Test support: workers started the way the TypeScript parent starts them, inside the sandbox.

`SandboxLauncher(...)` is a `launcher` for worker_process.evaluate: `python3 -I -B -u
kforge_bootstrap.py --writable <scratch> --read-only <scratch>/in --hide ... ROLE` with the
parent's scrubbed environment (HOME and TMPDIR in the scratch), optionally as another user through
`setpriv` (the path taken when kforge does not run as root).
"""

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

WORKER_ROOT = Path(__file__).resolve().parent.parent
BOOTSTRAP = WORKER_ROOT / "kforge_bootstrap.py"
SCRATCH_FOLDERS = ("in", "out", "build", "home", "tmp")
TARGETS_MARKER = "TARGETS = {}  # __KFORGE_TEST_TARGETS__"
#: What the parent's allow-list passes on from its own environment for the GPU (worker-environment.ts).
PASSED_THROUGH = ("CUDA_VISIBLE_DEVICES", "CUDA_HOME", "LD_LIBRARY_PATH", "TORCH_CUDA_ARCH_LIST", "MAX_JOBS")


@dataclass
class SandboxLauncher:
    """Command lines and environments of sandboxed workers (what src/eval/process/worker-sandbox.ts builds)."""

    hide: Sequence[Path] = ()
    expose: Sequence[Path] = ()
    mode: str = "on"
    #: Run the workers as this uid (through setpriv), as a kforge that is not root would.
    as_uid: Optional[int] = None
    extra_env: Dict[str, str] = field(default_factory=dict)

    def __call__(self, role: str, cwd: Path) -> Tuple[List[str], Dict[str, str]]:
        for name in SCRATCH_FOLDERS:
            (cwd / name).mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable,
            "-I",
            "-B",
            "-u",
            str(BOOTSTRAP),
            "--worker-dir",
            str(WORKER_ROOT),
            "--sandbox",
            self.mode,
            "--writable",
            str(cwd),
            "--read-only",
            str(cwd / "in"),
        ]
        if role == "candidate":
            command += ["--handover-socket", str(cwd / "in" / "handover.sock")]
        for path in self.hide:
            command += ["--hide", str(path)]
        for path in self.expose:
            command += ["--expose", str(path)]
        command.append(role)
        if self.as_uid is not None:
            command = as_user(self.as_uid) + command
        passed = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            **passed,
            "HOME": str(cwd / "home"),
            "TMPDIR": str(cwd / "tmp"),
            "USER": "kforge",
            "LOGNAME": "kforge",
            **self.extra_env,
        }
        return command, environment


def as_user(uid: int) -> List[str]:
    """The `setpriv` prefix that runs a command as uid:uid without supplementary groups."""
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]


def setpriv_refusal() -> Optional[str]:
    """Why commands cannot be run as another uid here (None: they can)."""
    if os.geteuid() != 0:
        return "needs root to start a process as another uid"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    return None


def user_namespace_refusal(uid: int) -> Optional[str]:
    """Why an unprivileged uid cannot make a user namespace here (None: it can), as the kernel says."""
    probe = subprocess.run(
        as_user(uid)
        + [
            sys.executable,
            "-c",
            (
                "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
                "print('ok' if libc.unshare(0x10000000) == 0 else os.strerror(ctypes.get_errno()))"
            ),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    answer = probe.stdout.strip() or probe.stderr.strip()
    return None if answer == "ok" else f"the kernel refuses a user namespace to uid {uid}: {answer}"


def stage_candidate(source: Path, scratch: Path, targets: dict) -> Path:
    """Copies an attack candidate into the scratch's `in` folder with its targets filled in (as the
    parent copies a candidate there); returns the copy's path."""
    text = source.read_text()
    assert TARGETS_MARKER in text, f"{source.name} has no targets line"
    folder = scratch / "in" / "candidate"
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / source.name
    copy.write_text(text.replace(TARGETS_MARKER, f"TARGETS = {json.dumps(targets)}"))
    return copy


def stage_problem(source: Path, scratch: Path) -> Path:
    folder = scratch / "in" / "problem"
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / source.name
    shutil.copyfile(source, copy)
    return copy


def processes_with(marker: str) -> List[int]:
    """Pids of processes whose command line contains `marker`."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    found.append(int(name))
        except OSError:
            pass
    return found


def process_state(pid: int) -> Optional[str]:
    """The state letter of /proc/<pid>/stat (R, S, T, Z, …), or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None
