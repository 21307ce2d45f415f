"""Eager's device time for one problem in one plain process, before and after what kforge's
reference role does between timing its baselines and re-timing eager beside the candidate.

    python3 bench/gpu/anchor_probe.py PROBLEM.py [--calls 20]

Prints torch's convolution and matmul flags, then the median of `--calls` event-timed forwards
(each after a synchronize) of a fresh fp32 model: first; after a float64 copy of the model ran
the same inputs (the reference's float64 outputs); after a judge-sized allocation (four times the
output, in float64) was made and freed; after torch.cuda.empty_cache(). No kforge code is loaded:
a figure that moves here moves in PyTorch, not in kforge's timing.

With `--free-gib G`, the first forwards run with the device filled but for G GiB (a filler tensor,
freed before any timing): PyTorch's cuDNN convolutions try the algorithms cuDNN suggests in order,
skip any whose workspace cannot be allocated, and keep the first that runs for the rest of the
process (aten/src/ATen/native/cudnn, `try_all` and its benchmark cache). If eager's re-timings in
kforge's reference worker are slow because that worker's first convolution met a full device, the
figures here are slow too, and the kernels printed (the three with most device time in one
profiled forward) differ from a run without the flag.
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


def top_kernels(model, inputs, count=3):
    """The `count` device kernels with most time in one profiled forward: (name, ms)."""
    from torch.profiler import ProfilerActivity, profile

    with torch.no_grad(), profile(activities=[ProfilerActivity.CUDA]) as profiled:
        model(*inputs)
        torch.cuda.synchronize()
    totals = {}
    for event in profiled.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            device_us = getattr(event, "device_time_total", None) or getattr(event, "cuda_time_total", 0)
            totals[event.name] = totals.get(event.name, 0.0) + device_us / 1000
    return sorted(totals.items(), key=lambda item: -item[1])[:count]


def filler(free_gib):
    """1 GiB tensors that leave about `free_gib` GiB of the device free."""
    free, _ = torch.cuda.mem_get_info()
    return [torch.empty(2**30, dtype=torch.uint8, device="cuda") for _ in range(int(free / 2**30 - free_gib))]


def first_forwards(model, inputs, held):
    """Three forwards with as much of `held` kept as lets them run: a forward that runs out of memory
    gives one GiB back and tries again (cuDNN keeps only an algorithm that ran)."""
    while True:
        try:
            with torch.no_grad():
                for _ in range(3):
                    output = model(*inputs)
            torch.cuda.synchronize()
            return output
        except torch.cuda.OutOfMemoryError:
            if not held:
                raise
            held.pop()
            torch.cuda.empty_cache()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem")
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--free-gib", type=float, help="leave only this much device memory free for the first forwards")
    args = parser.parse_args()
    problem = load(args.problem)
    flags = {
        "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "cudnn.benchmark": torch.backends.cudnn.benchmark,
        "cudnn.deterministic": torch.backends.cudnn.deterministic,
        "matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
    }
    print(args.problem.rsplit("/", 1)[-1], flags, f"free_gib={args.free_gib}", flush=True)
    torch.manual_seed(0)
    inputs = [value.cuda() if torch.is_tensor(value) else value for value in problem.get_inputs()]
    model = problem.Model(*problem.get_init_inputs()).cuda()
    held = filler(args.free_gib) if args.free_gib is not None else []
    output = first_forwards(model, inputs, held)
    if args.free_gib is not None:
        print(
            f"  first forwards beside a {len(held)} GiB filler, {torch.cuda.mem_get_info()[0] / 2**30:.2f} GiB free",
            flush=True,
        )
    del held
    torch.cuda.empty_cache()
    print(f"  first: {timed(model, inputs, args.calls):.3f} ms", flush=True)
    try:
        print(f"  kernels: {[(name[:90], round(ms, 3)) for name, ms in top_kernels(model, inputs)]}", flush=True)
    except Exception as error:  # noqa: BLE001 -- the timings above stand without it
        print(f"  kernels: the profiler failed: {error}", flush=True)
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
