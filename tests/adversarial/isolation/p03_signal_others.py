"""CHEAT (docs/hacks.md #18, process reach): stops and slows other processes (a baseline being timed).

Sends SIGSTOP to the test's sentinel and to its own parent, and lowers the sentinel's priority
(setpriority to 19), as a candidate that slows the reference's baselines would. Expected: the
sentinel's pid does not exist in the sandbox's PID namespace (ESRCH), the sandbox's init ignores
the signal; the sentinel keeps running at its priority.
"""

import os
import signal

import torch
import torch.nn as nn

TARGETS = {}  # __KFORGE_TEST_TARGETS__


def _attack():
    for pid in (TARGETS.get("sentinel_pid", 0), os.getppid()):
        if pid <= 1 and pid != os.getppid():
            continue
        try:
            os.kill(pid, signal.SIGSTOP)
            print(f"ATTACK p03: stopped {pid}", flush=True)
        except OSError as error:
            print(f"ATTACK p03: SIGSTOP {pid} refused: {error.strerror}", flush=True)
    try:
        os.setpriority(os.PRIO_PROCESS, TARGETS.get("sentinel_pid", 0) or 1, 19)
        print("ATTACK p03: lowered the sentinel's priority", flush=True)
    except OSError as error:
        print(f"ATTACK p03: setpriority refused: {error.strerror}", flush=True)


_attack()


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
