"""The candidate role: build, load, correctness trials (outputs saved to files), timed calls.

Before the candidate runs: the channel is already private (channel.py), core dumps are off, the
identities of the timing functions are recorded, and the cwd is the scratch directory the parent
started the worker in. The request lives only in this function's locals.
"""

import gc
import os
import resource
from typing import Any, Dict, List

import torch

from . import outputs
from .build import build_candidate
from .build_info import collect_build_info
from .channel import Channel, ProtocolError
from .device import resolve_device
from .environment import l2_cache_bytes
from .errors import StageFailure, failures_as
from .inputs import call_model, input_digest, make_model, make_trial
from .precision import run_dtype
from .problem_loader import load_problem
from .request import parse_candidate_request
from .stages import stage
from .timing import bound_calls, changed_timers, time_calls, timer_identities

CONSTRUCT = dict(kind="runtime_error", check="construct", context="ModelNew(*get_init_inputs()) raised")
FORWARD = dict(kind="runtime_error", check="forward", context="the candidate's forward raised")


def limit_resources() -> None:
    """No core dumps (a crashing candidate must not fill the disk); nothing that would break CUDA."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def check_timers(snapshot: Dict[str, Any]) -> None:
    changed = changed_timers(snapshot)
    if changed:
        raise StageFailure(
            "rejected", "timer-patched",
            f"the candidate replaced timing or channel functions of the worker: {', '.join(changed)}",
        )


def save_output(output: Any, path: str) -> str:
    try:
        flat = outputs.flatten(output)
    except outputs.OutputStructureError as error:
        raise StageFailure("runtime_error", "forward", f"the candidate's output cannot be saved: {error}") from error
    outputs.save(flat, path)
    return path


def run_correctness(problem, model_class, seeds: List[int], device, dtype, output_dir: str) -> List[dict]:
    saved = []
    for index, seed in enumerate(seeds):
        model, inputs = make_trial(problem, model_class, seed, device, dtype, **CONSTRUCT)
        with failures_as(**FORWARD):
            output = call_model(model, inputs, seed, device)
        path = save_output(output, os.path.join(output_dir, f"correctness-{index}.pt"))
        saved.append({"seed": seed, "path": path, "input_digest": input_digest(inputs)})
        del model, inputs, output
    return saved


def run_timing(problem, model_class, request, device, dtype) -> dict:
    sets = [make_trial(problem, model_class, seed, device, dtype, **CONSTRUCT) for seed in request.run.timing_seeds]
    wanted = set(request.sample_calls)
    kept: Dict[int, outputs.FlatOutput] = {}

    def keep(index: int, output: Any) -> None:
        if index in wanted:
            kept[index] = outputs.flatten(output)

    with failures_as(**FORWARD), torch.no_grad():
        timed = time_calls(bound_calls(sets), request.warmup_trials, request.perf_trials, device,
                           l2_cache_bytes(device), on_output=keep)
    samples = []
    for index in sorted(kept):
        path = os.path.join(request.output_dir, f"timed-{index}.pt")
        outputs.save(kept[index], path)
        samples.append({"call": index, "seed": request.run.timing_seeds[index % len(sets)], "path": path})
    return {"times_ms": timed.times_ms, "wall_ms": timed.wall_ms, "samples": samples}


def run_candidate(channel: Channel, message: dict) -> None:
    request = parse_candidate_request(message)
    run = request.run
    limit_resources()
    scratch_dir = os.getcwd()
    device = resolve_device(run.backend, run.device)
    dtype = run_dtype(run.precision)
    timers = timer_identities()
    os.makedirs(request.output_dir, exist_ok=True)
    with stage(channel.send, "build"):
        problem = load_problem(run.problem, run.preset)
        gc.collect()
        os.chdir(scratch_dir)
        built = build_candidate(request.candidate, request.build_dir, device)
        if run.backend == "cuda":
            channel.send("build-info", **collect_build_info(built.shared_objects))
        check_timers(timers)
    with stage(channel.send, "load"):
        make_model(problem, built.model_class, run.correctness_seeds[0], device, dtype, **CONSTRUCT)
    with stage(channel.send, "correctness"):
        saved = run_correctness(problem, built.model_class, run.correctness_seeds, device, dtype, request.output_dir)
        check_timers(timers)
    channel.send("correctness-outputs", outputs=saved)
    reply = channel.receive()
    if reply is None or reply.get("type") == "stop":
        return
    if reply.get("type") != "continue":
        raise ProtocolError(f"expected a 'continue' or 'stop' line, got type {reply.get('type')!r}")
    with stage(channel.send, "timing"):
        result = run_timing(problem, built.model_class, request, device, dtype)
        check_timers(timers)
    channel.send("timing", **result)
