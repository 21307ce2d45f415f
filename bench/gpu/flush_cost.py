#!/usr/bin/env python3
"""What the L2 flush costs the call timed behind it, on a GPU (docs/benchmarks/timing-h200.md).

kforge (worker/kforge_worker/timing/timing.py) and `triton.testing.do_bench` flush the L2 by
zeroing a buffer of twice its size, then record the start event right behind it. Zeroing leaves
the L2 full of dirty lines, which the timed kernel's own traffic must write back to memory; ncu
instead invalidates the caches before it measures a kernel, so it starts clean. This times one
memory-bound kernel (`torch.mul(x, 2, out=y)`, 1 read + 1 write per element) and a single-element
kernel between CUDA events, with the device held busy (a spin kernel) while the host launches,
behind each of:

- `none`: no flush;
- `zero`: the buffer zeroed (kforge's and do_bench's flush: dirty lines left);
- `read`: the buffer read (a sum): every line evicted, written back if dirty, clean lines left;
- `zero+read`: zeroed, then a second buffer read (the same eviction as `zero`, then clean);

and, with `--ncu` (when ncu is on PATH), ncu's gpu__time_duration of the same kernels with its
clocks at base and left free. The difference between `zero` and `read`/`zero+read` is the flush's
cost to the timed kernel.

    python3 bench/gpu/flush_cost.py OUT [--ncu]

Writes OUT/flush_cost.json and OUT/flush_cost.md.
"""

import argparse
import csv
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

SIZES = {"1 element": 1, "4 Mi": 4 * 2**20, "16 Mi": 16 * 2**20, "64 Mi": 64 * 2**20}
CALLS, WARMUP = 200, 20
HOLD_CYCLES = 1_000_000  # about 0.5 ms at the H200's clock: longer than any launch here
FLUSHES = ("none", "zero", "read", "zero+read")


def kernels(device):
    import torch

    made = {}
    for name, count in SIZES.items():
        x = torch.randn(count, device=device)
        y = torch.empty_like(x)
        made[name] = lambda x=x, y=y: torch.mul(x, 2.0, out=y)
    return made


def flushes(device):
    import torch

    l2 = torch.cuda.get_device_properties(device).L2_cache_size or 64 * 2**20
    zeroed = torch.empty(2 * l2, dtype=torch.uint8, device=device)
    read = torch.ones(2 * l2 // 4, dtype=torch.float32, device=device)
    sink = torch.empty((), device=device)
    return l2, {
        "none": lambda: None,
        "zero": lambda: zeroed.zero_(),
        "read": lambda: torch.sum(read, dim=0, out=sink),
        "zero+read": lambda: (zeroed.zero_(), torch.sum(read, dim=0, out=sink)),
    }


def time_one(call, flush):
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for index in range(WARMUP + CALLS):
        torch.cuda.synchronize()
        torch.cuda._sleep(HOLD_CYCLES)
        flush()
        start.record()
        call()
        end.record()
        torch.cuda.synchronize()
        if index >= WARMUP:
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def child_time():
    import torch

    device = torch.device("cuda", 0)
    made = kernels(device)
    l2, flush_calls = flushes(device)
    figures = {"l2_bytes": l2, "device": torch.cuda.get_device_name(device), "torch": torch.__version__, "ms": {}}
    with torch.no_grad():
        for name, call in made.items():
            figures["ms"][name] = {}
            for flush in FLUSHES:
                figures["ms"][name][flush] = time_one(call, flush_calls[flush])
            figures["ms"][name]["empty, zero"] = time_one(lambda: None, flush_calls["zero"])
    print(json.dumps(figures))


def child_ncu():
    import torch

    device = torch.device("cuda", 0)
    made = kernels(device)
    with torch.no_grad():
        for call in made.values():
            call()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("kforge")
        for call in made.values():
            for _ in range(3):
                call()
            torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()


def ncu_ms(clock_control):
    """{size name: mean gpu__time_duration of its kernel, ms} under ncu (which flushes the caches
    itself): the profiled kernels come in launch order, three per size."""
    command = ["ncu", "--csv", "--clock-control", clock_control, "--metrics", "gpu__time_duration.sum"]
    command += ["--nvtx", "--nvtx-include", "kforge/", sys.executable, str(Path(__file__).resolve()), "--child-ncu"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240)
    rows = done.stdout[done.stdout.find('"ID"') :] if '"ID"' in done.stdout else ""
    values = []
    for row in csv.DictReader(io.StringIO(rows)):
        if row.get("Metric Name") == "gpu__time_duration.sum":
            scale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0}.get(row.get("Metric Unit", "nsecond"), 1e-6)
            values.append(float(row["Metric Value"].replace(",", "")) * scale)
    if len(values) != 3 * len(SIZES):
        return {}, f"{len(values)} kernels profiled, expected {3 * len(SIZES)}: " + done.stderr[-1500:]
    return {name: statistics.mean(values[3 * index : 3 * index + 3]) for index, name in enumerate(SIZES)}, ""


def main():
    if sys.argv[1:2] == ["--child-time"]:
        child_time()
        return
    if sys.argv[1:2] == ["--child-ncu"]:
        child_ncu()
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--ncu", action="store_true")
    parser.add_argument(
        "--hold-device-lock",
        action="store_true",
        help="hold kforge's host-wide device lock throughout (kforge runs beside it wait their turn)",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from device_lock import kforge_device_lock

    with kforge_device_lock(args.hold_device_lock):
        record(args)


def record(args):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    runs = []
    for _ in range(args.processes):
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--child-time"], capture_output=True, text=True, timeout=300
        )
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        runs.append(json.loads(lines[-1]) if lines else {"error": done.stderr[-2000:]})
    ncu = {}
    if args.ncu and shutil.which("ncu"):
        for clocks in ("base", "none"):
            ncu[clocks], ncu[f"{clocks} stderr"] = ncu_ms(clocks)
    record = {"started": started, "command": " ".join(sys.argv), "runs": runs, "ncu_ms": ncu, "pid": os.getpid()}
    (out / "flush_cost.json").write_text(json.dumps(record, indent=1))
    good = [run for run in runs if "ms" in run]
    lines = [
        f"{len(good)} processes, {CALLS} calls each (median of the per-process medians, ms); "
        f"L2 {good[0]['l2_bytes'] if good else '?'} bytes; {good[0]['device'] if good else ''}",
        "",
        "| kernel | "
        + " | ".join(f"flush {flush}" for flush in FLUSHES)
        + " | zero − zero+read µs | ncu base | ncu free |",
        "|---|" + "---|" * (len(FLUSHES) + 3),
    ]
    for name in SIZES:
        medians = {
            flush: statistics.median([run["ms"][name][flush] for run in good]) if good else None for flush in FLUSHES
        }
        cost = (medians["zero"] - medians["zero+read"]) * 1000 if good else None
        lines.append(
            f"| mul, {name} | "
            + " | ".join("—" if medians[flush] is None else f"{medians[flush]:.4f}" for flush in FLUSHES)
            + f" | {'—' if cost is None else f'{cost:.2f}'} | "
            + " | ".join(
                f"{ncu[clocks][name]:.4f}" if isinstance(ncu.get(clocks), dict) and name in ncu[clocks] else "—"
                for clocks in ("base", "none")
            )
            + " |"
        )
    if good:
        empty = statistics.median([run["ms"][name]["empty, zero"] for run in good for name in SIZES])
        lines += ["", f"No work between the events, behind the zeroing flush: {empty:.4f} ms."]
    (out / "flush_cost.md").write_text("\n".join(lines) + "\n")
    print((out / "flush_cost.md").read_text())


if __name__ == "__main__":
    main()
