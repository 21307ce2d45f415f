"""kforge's host-wide device lock, held from the GPU benchmarks' Python scripts.

`kforge_device_lock(True)` creates the lock file that `kforge eval` and every other kforge process
of the host take before they use cuda:0 (src/eval/pipeline/host-device-lock.ts), so that kforge runs
started beside a benchmark build meanwhile and then wait for the device, saying so, instead of
timing on it at the same time. It takes no place in kforge's line of waiters (`gpu<N>.queue/`): it
is meant to be taken first, when a lease starts; taken later, it waits until no kforge process
holds the lock, polling, and may wait behind several of them.

Used by bench/gpu/timing_record.py, bench/gpu/flush_cost.py and bench/output-io/run.py.
"""

import contextlib
import datetime
import json
import os
import re
import secrets
import socket
import tempfile
import time
from pathlib import Path


@contextlib.contextmanager
def kforge_device_lock(enabled):
    """Holds kforge's host-wide lock of cuda:0 while the block runs (nothing when not `enabled`): the
    file `<tmpdir>/kforge-device-locks/gpu<N>.lock`, created exclusively, naming this process as the
    Node side names its owner (pid, host, start time, token)."""
    if not enabled:
        yield
        return
    visible = (os.environ.get("CUDA_VISIBLE_DEVICES") or "").split(",")[0].strip()
    name = f"gpu{int(visible)}" if visible.isdigit() else (visible or "gpu0")
    directory = Path(tempfile.gettempdir()) / "kforge-device-locks"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / (re.sub(r"[^\w.-]", "_", name) + ".lock")
    stat = Path("/proc/self/stat").read_text()
    owner = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "start": stat[stat.rindex(")") + 2 :].split(" ")[19],
        "token": secrets.token_hex(8),
        "acquired_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z",
    }
    while True:
        try:
            handle = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            time.sleep(0.2)
            continue
        with os.fdopen(handle, "w") as file:
            file.write(json.dumps(owner))
        break
    try:
        yield
    finally:
        try:
            if json.loads(path.read_text()).get("token") == owner["token"]:
                path.unlink()
        except (OSError, ValueError):
            pass
