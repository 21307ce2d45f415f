"""The candidate's timing stage: timed calls on refilled inputs, guarded like the checked calls,
driven call by call by the parent (docs/timing.md).

Before each warm-up and timed call (outside the timed region): the model's live inputs are
refilled with the call's contents (timing_inputs.py), everything is reseeded with the contents'
seed, and the allocator is poisoned as before a correctness call. After each call (after the
closing synchronize): the device's last error, the output's leaves (`deferred-work`), the poison
(`stale-output`) and the thread count are checked, exactly as for a correctness call. Then the
worker writes `called` and waits for the parent's `step`: whether to keep this call's output (it
is then handed to the judge at once, with the digest of its inputs: handover.py), and what comes
next (the next call, a trusted batch, or the end of the phase). No list of sampled calls ever
exists in this process.
After the loop on cuda, `side-stream` (side_stream.py) on the calls' gaps.

With the run-time checks off (guard_runtime.py, benchmarks only) each model keeps its one input set
(no content sets, no refills), calls are only reseeded, and nothing is checked after them; the
kept outputs are still handed over and judged.
"""

from typing import Any, Dict, List, Optional

import torch

from ..guard.candidate_calls import CandidateCalls
from ..guard.guard_runtime import GuardRuntime
from ..guard.side_stream import side_stream_problem
from ..protocol.channel import Channel, ProtocolError
from ..protocol.environment import l2_cache_bytes
from ..protocol.errors import FORWARD, StageFailure, failures_as
from .candidate_batches import CandidateBatches
from .cross_check import cross_check
from .timing import bound_calls, time_calls, warmup_call_limit
from .timing_dialogue import receive_step
from .timing_inputs import build_timed_models, content_index, refill


def run_timing(
    calls: CandidateCalls, request, channel: Channel, contents_per_model: Optional[int] = None
) -> Dict[str, Any]:
    """The fields of the `timing` message."""
    run = request.run
    guard, device = calls.guard, calls.device
    forced = None if guard.enabled else 1
    models = build_timed_models(
        calls,
        run.timing_seeds,
        request.warmup_trials,
        request.perf_trials,
        contents=forced or contents_per_model,
        refilled=guard.enabled,
    )
    stage = _TimedCalls(calls, models, request, channel)
    with failures_as(**FORWARD), torch.no_grad():
        timed_calls = time_calls(
            bound_calls([(timed.model, timed.live) for timed in models]),
            stage.warmup_limit,
            request.perf_trials,
            device,
            l2_cache_bytes(device),
            prepare=stage.prepare,
            after=stage.after,
            proceed=stage.proceed,
        )
    _check_side_streams(guard, device, timed_calls)
    result = {
        **timed_calls.figures(device),
        "gap_ms": timed_calls.gap_ms,
        "samples": stage.samples,
        "contents_per_model": stage.contents,
    }
    if request.cross_check:
        with failures_as(**FORWARD), torch.no_grad():
            result["cross_check"] = cross_check(
                bound_calls([(timed.model, timed.live) for timed in models]),
                len(timed_calls.times_ms),
                device,
                l2_cache_bytes(device),
            )
    guard.record_call_checks()
    return result


class _TimedCalls:
    """What happens around each warm-up and timed call (the hooks of `time_calls`): the refill,
    reseed and poison before it, the guard's checks after it, then the parent's step: keep its
    output (handed over at once), run a trusted batch, go on or stop."""

    def __init__(self, calls: CandidateCalls, models, request, channel: Channel):
        self.calls, self.models, self.request, self.channel = calls, models, request, channel
        self.count, self.contents = len(models), len(models[0].contents)
        self.samples: List[dict] = []
        # The parent paces a warm-up by time call by call; this is the most it may ask for.
        self.warmup_limit = warmup_call_limit(request.warmup_trials, request.warmup_ms)
        self.limits = {"warmup": self.warmup_limit, "timed": request.perf_trials}
        self.batches = CandidateBatches(calls, models, self.contents, channel)

    def slot(self, phase: str, index: int):
        model_index, content = content_index(phase, index, self.count, self.request.warmup_trials, self.contents)
        return self.models[model_index], content

    def prepare(self, phase: str, index: int) -> None:
        timed, content = self.slot(phase, index)
        if self.calls.guard.enabled:
            refill(timed.live, timed.contents[content])
        self.calls.before(timed.live, timed.content_seeds[content])

    def after(self, phase: str, index: int, output: Any) -> None:
        self.calls.after(output, f"{'timed' if phase == 'timed' else 'warm-up'} call {index}")

    def keep(self, index: int, output: Any) -> None:
        timed, content = self.slot("timed", index)
        entry = {
            "id": f"timed-{index}",
            "call": index,
            "seed": timed.seed,
            "input_seed": timed.content_seeds[content],
        }
        self.samples.append(self.calls.hand_over(output, entry, timed.live))

    def proceed(self, phase: str, index: int, output: Any) -> bool:
        self.channel.send("called", phase=phase, index=index)
        kept = False
        while True:
            step = receive_step(self.channel)
            if step.keep:
                if phase != "timed" or kept:
                    raise ProtocolError(f"`keep` is for a timed call's output, once ({phase} call {index})")
                kept = True
                self.keep(index, output)
            if step.next == "batch":
                with failures_as(**FORWARD):
                    self.batches.run(step.calls, step.reseed)
                continue
            if step.next == "call" and index + 1 >= self.limits[phase]:
                raise ProtocolError(
                    f"the parent asked for {phase} call {index + 1}; the request allows {self.limits[phase]}"
                )
            return step.next == "call"


def _check_side_streams(guard: GuardRuntime, device, timed_calls) -> None:
    """`side-stream` on the timed calls' gaps (cuda), or why it does not apply."""
    if guard.enabled and device.type == "cuda":
        problem_text = side_stream_problem(timed_calls.times_ms, timed_calls.gap_ms) or side_stream_problem(
            timed_calls.times_ms, timed_calls.warmup_gap_ms, calls="warm-up calls (no hold ahead of them)"
        )
        if problem_text:
            raise StageFailure("rejected", "side-stream", problem_text)
        guard.log.record("side-stream", "passed", "no call left work on another stream after its own")
    elif guard.enabled:
        guard.log.record("side-stream", "skipped", "host clock on cpu: there is no stream to escape")
