#!/usr/bin/env python3
"""What a kforge worker holds on the GPU before and between evaluations (docs/sizes.md).

A worker process that waits for the device (its evaluation behind others) holds whatever its
start-up made on the GPU. This measures, in fresh processes, the device memory the driver
attributes to the process (nvidia-smi's per-process `used_memory`) and the time of each step:

- `steps`: import torch, then `torch.cuda.is_available()`, `device_count()`,
  `get_device_properties(0)`, `set_device(0)`, a one-element tensor on the device;
- `hello`: what a worker does before `hello` without a warm device (the environment it reports);
- `warm <role>`: the same with `KFORGE_WARM_DEVICE=cuda:0` (the warm start: context and lazy paths);
- `rest`: after a 1 GiB tensor was made and dropped and the allocator's cache given back.

    python3 bench/gpu/context_probe.py OUT

Writes OUT/context_probe.json and OUT/context_probe.md.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

WORKER = Path(__file__).resolve().parents[2] / "worker"


def used_mib(pid):
    """The device memory nvidia-smi attributes to `pid`, MiB (0 when it lists none for it)."""
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in done.stdout.splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) == 2 and parts[0] == str(pid):
            return int(parts[1])
    return 0


CHILD = r"""
import json, os, sys, time
mode = sys.argv[1]
def mark(name, started):
    print(json.dumps({"step": name, "s": round(time.perf_counter() - started, 4)}), flush=True)
    sys.stdin.readline()  # the parent reads nvidia-smi, then lets the child go on
started = time.perf_counter()
import torch
mark("import torch", started)
if mode == "steps":
    for name, step in (
        ("is_available", lambda: torch.cuda.is_available()),
        ("device_count", lambda: torch.cuda.device_count()),
        ("get_device_properties", lambda: torch.cuda.get_device_properties(0)),
        ("set_device", lambda: torch.cuda.set_device(0)),
        ("one element on the device", lambda: torch.empty(1, device="cuda:0")),
    ):
        started = time.perf_counter()
        step()
        torch.cuda.synchronize() if name == "one element on the device" else None
        mark(name, started)
    started = time.perf_counter()
    block = torch.empty(2**28, device="cuda:0")
    del block
    torch.cuda.empty_cache()
    mark("rest: 1 GiB made, dropped, cache given back", started)
elif mode == "hello":
    from kforge_worker.protocol.environment import collect_environment
    started = time.perf_counter()
    collect_environment()
    mark("collect_environment (what hello reports)", started)
else:
    from kforge_worker.protocol.environment import collect_environment, warm_up
    started = time.perf_counter()
    warm_up("cuda:0", mode.split()[1])
    mark("warm_up cuda:0 " + mode.split()[1], started)
    started = time.perf_counter()
    collect_environment()
    mark("collect_environment after the warm start", started)
"""


def probe(mode):
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, mode],
        cwd=WORKER,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    rows = []
    for line in child.stdout:
        if not line.startswith("{"):
            continue
        row = json.loads(line)
        row["used_mib"] = used_mib(child.pid)
        rows.append(row)
        child.stdin.write("\n")
        child.stdin.flush()
    child.wait(timeout=120)
    error = child.stderr.read()[-1500:] if child.returncode else ""
    return {"mode": mode, "rows": rows, "exit": child.returncode, "error": error}


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    record = {"started": time.time(), "command": " ".join(sys.argv), "probes": []}
    for mode in ("steps", "hello", "warm candidate", "warm reference"):
        record["probes"].append(probe(mode))
    (out / "context_probe.json").write_text(json.dumps(record, indent=1))
    lines = ["| process | step | seconds | device MiB (nvidia-smi, this process) |", "|---|---|---|---|"]
    for entry in record["probes"]:
        for row in entry["rows"]:
            lines.append(f"| {entry['mode']} | {row['step']} | {row['s']:.3f} | {row['used_mib']} |")
        if entry["exit"]:
            lines.append(f"| {entry['mode']} | exit {entry['exit']}: {entry['error'][-200:]!r} | | |")
    (out / "context_probe.md").write_text("\n".join(lines) + "\n")
    print((out / "context_probe.md").read_text())


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
