#!/usr/bin/env python3
"""Which part of the harness does a candidate crash under? Runs its forward once on the problem's
inputs in fresh processes, each with one more of what kforge's traced correctness call wraps it in:

- `plain`: the candidate alone, as its author would run it;
- `dispatch-mode`: under a TorchDispatchMode that passes every operator through (the dispatch trace's
  mechanism);
- `profiler`: under torch.profiler with CPU and (where there is one) CUDA activities;
- `profiler-all-threads`: the same with `_ExperimentalConfig(profile_all_threads=True)` where this
  torch has it (kernel_trace.py's all-threads mode);
- `both`: the all-threads profiler (or the plain one) and the dispatch mode together, as kforge runs it.

Each stage's exit status (a negative status is the signal), the last lines of its stderr
(faulthandler on: a native crash prints the Python stack) and whether forward returned or raised.

    python3 bench/gpu/crash_probe.py PROBLEM CANDIDATE [--device cuda] [--out FILE.json]

A candidate that crashes `plain` crashes by itself; one that crashes only from some stage on points
at what kforge adds (a verdict must judge the candidate, never the machine).
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

STAGES = ("plain", "dispatch-mode", "profiler", "profiler-all-threads", "both")
STDERR_TAIL = 3000

CHILD = r"""
import faulthandler, importlib.util, sys, traceback
faulthandler.enable()
import torch
stage, problem_path, candidate_path, device = sys.argv[1:5]

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

problem = load(problem_path, "probe_problem")
torch.manual_seed(0)
init = problem.get_init_inputs()
inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()]
candidate = load(candidate_path, "probe_candidate")
model = candidate.ModelNew(*init).to(device)

class PassThrough(torch.utils._python_dispatch.TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))

def profiler(all_threads):
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device == "cuda" and torch.profiler.ProfilerActivity.CUDA in torch.profiler.supported_activities():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    extra = {}
    if all_threads:
        config = getattr(torch.profiler, "_ExperimentalConfig", None)
        try:
            extra["experimental_config"] = config(profile_all_threads=True)
        except Exception as error:  # this torch has no all-threads mode
            print(f"no all-threads mode: {error}", flush=True)
    return torch.profiler.profile(activities=activities, **extra)

def call():
    with torch.no_grad():
        out = model(*inputs)
    if device == "cuda":
        torch.cuda.synchronize()
    return out

try:
    if stage == "plain":
        call()
    elif stage == "dispatch-mode":
        with PassThrough():
            call()
    elif stage in ("profiler", "profiler-all-threads"):
        with profiler(stage == "profiler-all-threads"):
            call()
    else:
        with profiler(True):
            with PassThrough():
                call()
    print("returned", flush=True)
except BaseException as error:
    traceback.print_exc()
    print(f"raised {type(error).__name__}: {str(error)[:300]}", flush=True)
"""


def probe(stage: str, problem: Path, candidate: Path, device: str, timeout_s: float) -> dict:
    command = [sys.executable, "-X", "faulthandler", "-c", CHILD, stage, str(problem), str(candidate), device]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"stage": stage, "status": None, "outcome": f"timed out after {timeout_s:.0f} s", "stderr": ""}
    lines = done.stdout.strip().splitlines()
    outcome = next((line for line in reversed(lines) if line.startswith(("returned", "raised"))), "no outcome")
    return {"stage": stage, "status": done.returncode, "outcome": outcome, "stderr": done.stderr[-STDERR_TAIL:]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("problem", type=Path)
    parser.add_argument("candidate", type=Path)
    parser.add_argument("--device", default="cuda", help="cuda or cpu (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per stage (default %(default)s)")
    parser.add_argument("--out", type=Path, help="write the stages' results here as JSON")
    args = parser.parse_args()
    for path in (args.problem, args.candidate):
        if not path.is_file():
            parser.error(f"no file {path}")
    results = []
    for stage in STAGES:
        result = probe(stage, args.problem.resolve(), args.candidate.resolve(), args.device, args.timeout)
        results.append(result)
        print(f"{stage:>22}: exit {result['status']}, {result['outcome']}", flush=True)
        if result["status"] not in (0, None) and result["stderr"]:
            print("  " + "\n  ".join(result["stderr"].strip().splitlines()[-12:]), flush=True)
    if args.out:
        args.out.write_text(
            json.dumps({"problem": str(args.problem), "candidate": str(args.candidate), "stages": results}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
