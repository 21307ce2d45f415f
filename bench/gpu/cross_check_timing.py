"""Cross-check kforge's timing method on a GPU with two independent ones.

Imports a problem and a candidate in one process and times the candidate's forward three ways:

- ``events-flush``: CUDA events around each call, device-wide synchronize, L2 flushed before each
  call (the method of ``kforge eval``), median of ``--calls`` calls;
- ``events-only``: CUDA events around a block of back-to-back calls (no flush, no per-call sync),
  so launch gaps are hidden and L2 stays warm: a lower figure is expected for small kernels;
- ``do_bench``: ``triton.testing.do_bench`` (its own flush and events), median.

Under ``ncu`` (``--ncu``) it runs a few calls only, so the profiler's kernel durations can be
read from its report. Usage::

    python3 bench/gpu/cross_check_timing.py PROBLEM CANDIDATE [--preset gpu] [--calls 100] [--ncu]

Prints one JSON object on standard output.
"""
import argparse
import importlib.util
import json
import statistics
import sys

import torch


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("problem")
    parser.add_argument("candidate")
    parser.add_argument("--preset", default="gpu")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--ncu", action="store_true")
    args = parser.parse_args()

    problem = load(args.problem, "kforge_problem")
    for key, value in getattr(problem, "KFORGE_PRESETS", {}).get(args.preset, {}).items():
        setattr(problem, key, value)
    candidate = load(args.candidate, "kforge_candidate")
    torch.manual_seed(0)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()]
    torch.manual_seed(0)
    model = candidate.ModelNew(*problem.get_init_inputs()).cuda()

    with torch.no_grad():
        for _ in range(10):
            model(*inputs)
        torch.cuda.synchronize()
        if args.ncu:
            for _ in range(5):
                model(*inputs)
            torch.cuda.synchronize()
            print(json.dumps({"ncu_calls": 5}))
            return

        l2_bytes = torch.cuda.get_device_properties(0).L2_cache_size
        flush = torch.empty(2 * l2_bytes // 4, dtype=torch.float32, device="cuda")
        flushed = []
        for _ in range(args.calls):
            flush.zero_()
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            model(*inputs)
            end.record()
            torch.cuda.synchronize()
            flushed.append(start.elapsed_time(end))

        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.calls):
            model(*inputs)
        end.record()
        torch.cuda.synchronize()
        back_to_back = start.elapsed_time(end) / args.calls

        result = {
            "events_flush_median_ms": statistics.median(flushed),
            "events_only_mean_ms": back_to_back,
        }
        try:
            import triton.testing

            result["do_bench_median_ms"] = triton.testing.do_bench(
                lambda: model(*inputs), warmup=25, rep=200, return_mode="median"
            )
        except Exception as error:  # triton absent or too old: report, do not fail
            result["do_bench_error"] = str(error).splitlines()[0]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
