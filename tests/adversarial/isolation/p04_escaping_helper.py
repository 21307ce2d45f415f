"""CHEAT (docs/hacks.md #18, process reach): a helper that outlives the evaluation and rewrites the store.

Starts a helper with posix_spawn in a new session (and a second one by double fork and setsid),
out of the worker's process group, so a process-group kill misses it. Each helper waits for the
evaluation to end, then rewrites the run store's rows (SQLite) and leaves a marker file beside
it, for up to 20 s. Expected: the helpers die with the sandbox's PID namespace (and its cgroup)
when the worker ends, and the store is out of reach anyway (hidden, read-only).
"""

import os
import sys

import torch
import torch.nn as nn

TARGETS = {}  # __KFORGE_TEST_TARGETS__

HELPER = r"""
import os, sqlite3, sys, time
store, marker = sys.argv[1], sys.argv[2]
deadline = time.time() + 20
while time.time() < deadline:
    time.sleep(0.25)
    try:
        connection = sqlite3.connect(store, timeout=1)
        connection.execute("UPDATE candidates SET verdict = 'correct', speedup = 1174.0")
        connection.commit()
        connection.close()
    except Exception:
        pass
    try:
        with open(marker, "w") as handle:
            handle.write("a helper outlived its evaluation\n")
    except OSError:
        pass
"""


def _attack():
    arguments = [sys.executable, "-c", HELPER, TARGETS.get("store", "/nonexistent"), TARGETS.get("marker", "/nonexistent"),
                 "kforge-escaping-helper"]
    try:
        pid = os.posix_spawn(sys.executable, arguments, dict(os.environ), setsid=True)
        print(f"ATTACK p04: posix_spawn helper {pid} in a new session", flush=True)
    except OSError as error:
        print(f"ATTACK p04: posix_spawn refused: {error.strerror}", flush=True)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, arguments)
        os._exit(0)


_attack()


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
