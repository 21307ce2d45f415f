"""Eager's device time for one problem in one plain process, before and after what kforge's
reference role does between timing its baselines and re-timing eager beside the candidate.

    python3 bench/gpu/anchor_probe.py PROBLEM.py [--calls 20]

Prints torch's convolution and matmul flags, then the median of `--calls` event-timed forwards
(each after a synchronize) of a fresh fp32 model: first; after a float64 copy of the model ran
the same inputs (the reference's float64 outputs); after a judge-sized allocation (four times the
output, in float64) was made and freed; after torch.cuda.empty_cache(). No kforge code is loaded:
a figure that moves here moves in PyTorch, not in kforge's timing.
"""

import argparse
import importlib.util
import statistics

import torch


def load(path):
    spec = importlib.util.spec_from_file_location("problem", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(model, inputs, calls):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    with torch.no_grad():
        for _ in range(calls):
            torch.cuda.synchronize()
            start.record()
            model(*inputs)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem")
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    problem = load(args.problem)
    flags = {
        "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "cudnn.benchmark": torch.backends.cudnn.benchmark,
        "cudnn.deterministic": torch.backends.cudnn.deterministic,
        "matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
    }
    print(args.problem.rsplit("/", 1)[-1], flags, flush=True)
    torch.manual_seed(0)
    inputs = [value.cuda() if torch.is_tensor(value) else value for value in problem.get_inputs()]
    model = problem.Model(*problem.get_init_inputs()).cuda()
    with torch.no_grad():
        for _ in range(3):
            output = model(*inputs)
    torch.cuda.synchronize()
    print(f"  first: {timed(model, inputs, args.calls):.3f} ms", flush=True)
    double = problem.Model(*problem.get_init_inputs()).cuda().double()
    with torch.no_grad():
        double(*[value.double() if torch.is_tensor(value) and value.is_floating_point() else value for value in inputs])
    del double
    print(f"  after a float64 forward: {timed(model, inputs, args.calls):.3f} ms", flush=True)
    judge = torch.empty(4 * output.numel(), dtype=torch.float64, device="cuda")
    del judge
    print(f"  after a judge-sized allocation freed: {timed(model, inputs, args.calls):.3f} ms", flush=True)
    torch.cuda.empty_cache()
    print(f"  after empty_cache: {timed(model, inputs, args.calls):.3f} ms", flush=True)
    print(f"  flags now: {torch.backends.cudnn.allow_tf32=} {torch.backends.cudnn.benchmark=}", flush=True)


if __name__ == "__main__":
    main()
