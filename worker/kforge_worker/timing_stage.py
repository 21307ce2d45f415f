"""The candidate's timing stage: timed calls on refilled inputs, guarded like the checked calls.

Before each warm-up and timed call (outside the timed region): the model's live inputs are
refilled with the call's contents (timing_inputs.py), everything is reseeded with the contents'
seed, and the allocator is poisoned as before a correctness call. After each call (after the
closing synchronize): the device's last error, the output's leaves (`deferred-work`), the poison
(`stale-output`) and the thread count are checked, exactly as for a correctness call; the outputs
of the sampled calls are copied and saved with the digest of their inputs. After the loop, on
cuda, `side-stream`: median event time < SIDE_STREAM_RATIO x lower-decile wall time - SIDE_STREAM_SLACK_MS.
The wall times' lower decile, not their median: a busy host (other processes preempting this one)
stretches some calls' wall time and never their event time, and a small kernel's median wall time
then looked like hidden work. Work hidden on a side stream stretches every call, so it stays in
the lower decile.

With the run-time checks off (guard_runtime.py, benchmarks only) each model keeps its one input set
(no content sets, no refills), calls are only reseeded, and nothing is checked after them; the
sampled outputs are still saved and judged.
"""

import os
import statistics
from typing import Any, Dict, List

import torch

from .correctness_stage import CONSTRUCT, FORWARD, copy_output, save_copied
from .environment import l2_cache_bytes
from .errors import StageFailure, failures_as
from .guard_runtime import GuardRuntime
from .inputs import input_digest, seed_everything
from .timing import bound_calls, time_calls
from .timing_inputs import build_timed_models, content_index, refill

SIDE_STREAM_RATIO = 0.5
SIDE_STREAM_SLACK_MS = 0.05
SIDE_STREAM_WALL_QUANTILE = 0.1


def _lower_quantile(values: List[float], quantile: float) -> float:
    """The value at `quantile` of the sorted values (nearest rank, rounding down)."""
    ordered = sorted(values)
    return ordered[int(quantile * (len(ordered) - 1))]


def side_stream_problem(times_ms: List[float], wall_ms: List[float]) -> str:
    """The `side-stream` finding for cuda timings, or '' when event and wall time agree."""
    if not times_ms or not wall_ms:
        return ""
    event, wall = statistics.median(times_ms), _lower_quantile(wall_ms, SIDE_STREAM_WALL_QUANTILE)
    if event < SIDE_STREAM_RATIO * wall - SIDE_STREAM_SLACK_MS:
        return (f"the median CUDA-event time on the current stream ({event:.4f} ms) is below half the "
                f"lower-decile wall time of the synchronized call ({wall:.4f} ms; every call took at least "
                f"about that long): work ran on a stream the events do not see")
    return ""


def run_timing(problem, model_class, request, device, dtype, guard: GuardRuntime) -> Dict[str, Any]:
    """The fields of the `timing` message."""
    run = request.run
    models = build_timed_models(problem, model_class, run.timing_seeds, request.warmup_trials,
                                request.perf_trials, device, dtype, contents=None if guard.enabled else 1,
                                **CONSTRUCT)
    count, contents = len(models), len(models[0].contents)
    wanted = set(request.sample_calls)
    kept: Dict[int, dict] = {}

    def slot(phase: str, index: int):
        model_index, content = content_index(phase, index, count, request.warmup_trials, contents)
        return models[model_index], content

    def prepare(phase: str, index: int) -> None:
        timed, content = slot(phase, index)
        if guard.enabled:
            refill(timed.live, timed.contents[content])
        seed_everything(timed.content_seeds[content])
        guard.before_call(timed.live)

    def after(phase: str, index: int, output: Any) -> None:
        guard.after_call(output, f"{'timed' if phase == 'timed' else 'warm-up'} call {index}")
        if phase == "timed" and index in wanted:
            timed, content = slot(phase, index)
            # Saved at once (outside the timed region): at KernelBench's sizes the sampled outputs
            # held until the loop ends would be gigabytes each.
            path = save_copied(copy_output(output), os.path.join(request.output_dir, f"timed-{index}.out"))
            kept[index] = {"path": path, "seed": timed.seed,
                           "input_seed": timed.content_seeds[content], "input_digest": input_digest(timed.live)}

    with failures_as(**FORWARD), torch.no_grad():
        timed_calls = time_calls(bound_calls([(timed.model, timed.live) for timed in models]),
                                 request.warmup_trials, request.perf_trials, device, l2_cache_bytes(device),
                                 prepare=prepare, after=after)
    samples = []
    for index in sorted(kept):
        samples.append({"call": index, "seed": kept[index]["seed"], "input_seed": kept[index]["input_seed"],
                        "path": kept[index]["path"], "input_digest": kept[index]["input_digest"]})
    if guard.enabled and device.type == "cuda":
        problem_text = side_stream_problem(timed_calls.times_ms, timed_calls.wall_ms)
        if problem_text:
            raise StageFailure("rejected", "side-stream", problem_text)
        guard.log.record("side-stream", "passed", "event and wall times agree")
    elif guard.enabled:
        guard.log.record("side-stream", "skipped", "host clock on cpu: there is no stream to escape")
    guard.record_call_checks()
    return {"times_ms": timed_calls.times_ms, "wall_ms": timed_calls.wall_ms, "samples": samples,
            "contents_per_model": contents}
