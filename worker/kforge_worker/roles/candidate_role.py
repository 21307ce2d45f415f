"""The candidate role: static guard and build, load, correctness trials, timed calls, one stage
after another (`_run_candidate`) — each call of the candidate through the one protocol of
guard/candidate_calls.py (the run-time guard around it, its judged output handed to the judge at
once).

Before the candidate runs: the channel is already private (channel.py), core dumps are off, the
identities of the timing functions and torch's global state are recorded, the static guard has
read the source, and the cwd is the scratch directory the parent started the worker in. The
request lives only in this function's locals.
"""

import gc
import os
import resource
import time
from typing import Optional

from ..build.build import build_candidate
from ..protocol.run_device import resolve_device
from ..device.memory_usage import release_cached
from ..guard.guard_runtime import GuardRuntime
from ..guard.guard_settings import parse_guard, runtime_checks_enabled
from ..guard.candidate_calls import CandidateCalls
from ..problem.precision import run_dtype
from ..problem.problem_loader import load_candidate_problem
from ..protocol.channel import Channel, ProtocolError
from ..protocol.handover import Handover, HandOverStopped
from ..protocol.request import parse_candidate_request
from ..protocol.stages import stage
from ..timing.timing import TIMER_TARGETS
from ..timing.timing_stage import run_timing
from .correctness_stage import run_correctness


def limit_resources() -> None:
    """No core dumps (a crashing candidate must not fill the disk); nothing that would break CUDA."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def awaits_device(message: dict) -> bool:
    """The request's `await_device` (docs/worker-protocol.md, Candidate role); false when absent."""
    value = message.get("await_device", False)
    if not isinstance(value, bool):
        raise ProtocolError(f"expected `await_device` to be true or false, got {value!r}")
    return value


def reused_build(shared_objects, started_ns: int):
    """True when every shared object the build loaded predates the build stage (nothing was
    compiled or linked: a build-cache hit), False when one is newer, None without extensions."""
    try:
        modified = [os.stat(path).st_mtime_ns for path in shared_objects]
    except OSError:
        return None
    return all(time_ns < started_ns for time_ns in modified) if modified else None


def wait_for_device(channel: Channel, message: dict) -> bool:
    """After `built`: True on `continue`, False on `stop` or the end of stdin. A `continue` that
    carries `memory_grant_bytes` (what the evaluation was granted with its device) sets it on the
    request, where the role's out-of-memory rule reads it (fault_report.py)."""
    reply = channel.receive()
    if reply is None or reply.get("type") == "stop":
        return False
    if reply.get("type") != "continue":
        raise ProtocolError(f"expected a 'continue' or 'stop' line, got type {reply.get('type')!r}")
    if reply.get("memory_grant_bytes") is not None:
        message["memory_grant_bytes"] = reply["memory_grant_bytes"]
    return True


def contents_override(message: Optional[dict]) -> Optional[int]:
    """`contents_per_model` of the `continue` that starts the timing stage, or None when absent."""
    value = None if message is None else message.get("contents_per_model")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ProtocolError(f"expected `contents_per_model` to be a positive integer, got {value!r}")
    return value


def run_candidate(channel: Channel, message: dict) -> None:
    try:
        _run_candidate(channel, message)
    except HandOverStopped:
        return


def _run_candidate(channel: Channel, message: dict) -> None:
    """The candidate's evaluation, one stage after another: build, (the device), load,
    correctness, (the parent's go-ahead), timing."""
    run = CandidateRun(channel, message)
    with stage(channel.send, "build"):
        built = run.build()
    if run.await_device:
        channel.send("built", cache_hit=reused_build(built.shared_objects, run.build_started_ns))
        if not wait_for_device(channel, message):
            return
    calls = CandidateCalls(run.problem, built.model_class, run.device, run.dtype, run.guard, run.handover)
    with stage(channel.send, "load"):
        run.load(calls)
    with stage(channel.send, "correctness"):
        saved, extra = run_correctness(calls, run.request)
        run.end_correctness()
    release_cached()  # the reference judges these outputs on the same device now
    channel.send("correctness-outputs", outputs=saved, generalisation=extra)
    run.handover.release = None  # timed calls keep a warm allocator (the estimate counts what timing holds)
    reply = channel.receive()
    if reply is None or reply.get("type") == "stop":
        return
    if reply.get("type") != "continue":
        raise ProtocolError(f"expected a 'continue' or 'stop' line, got type {reply.get('type')!r}")
    contents = contents_override(reply)
    with stage(channel.send, "timing"):
        run.guard.check_state("the candidate's calls before timing")
        run.guard.reset_persisting_l2()
        result = run_timing(calls, run.request, channel, contents)
        run.end_timing()
    channel.send("timing", **result)


class CandidateRun:
    """What the stages share: the request, the device, the guard, the hand-over, the watches."""

    def __init__(self, channel: Channel, message: dict) -> None:
        self.channel = channel
        self.request = parse_candidate_request(message, parse_guard)
        enabled = runtime_checks_enabled()
        run = self.request.run
        limit_resources()
        self.scratch_dir = os.getcwd()
        self.device = resolve_device(run.backend, run.device)
        self.dtype = run_dtype(run.precision)
        self.guard = GuardRuntime(
            self.device, self.request.guard.policy, enabled, (channel.send, channel.receive), TIMER_TARGETS
        )
        self.handover = Handover(channel, self.request.handover_pipe, release=release_cached)
        self.await_device = awaits_device(message)
        self.build_started_ns = time.time_ns()
        self.problem = None

    def build(self):
        """Stage `build`: the problem, the static guard, the build and import of the candidate."""
        request, run, guard, send = self.request, self.request.run, self.guard, self.channel.send
        self.problem, folder, names = load_candidate_problem(run.problem, run.preset, run.overrides)
        gc.collect()
        os.chdir(self.scratch_dir)
        findings = guard.before_candidate(send, request, folder)
        built = build_candidate(request.candidate, request.build_dir, run.backend, self.device, names)
        guard.candidate_imported(built, findings, run.backend.build.lists_built_kernels)
        guard.check_after("importing the candidate")
        return built

    def load(self, calls: CandidateCalls) -> None:
        """Stage `load`: ModelNew constructed once, on the first correctness seed."""
        alignment = calls.construct(self.request.run.correctness_seeds[0])
        if alignment is not None and self.guard.enabled:
            self.guard.log.record("parameters", "note", alignment)
        self.guard.check_state("constructing ModelNew")

    def end_correctness(self) -> None:
        """The checks that close the correctness stage, and its `guard-checks`."""
        self.guard.check_modules("the correctness trials")
        self.guard.check_after("the correctness trials")
        self.guard.record_call_checks()
        self.channel.send("guard-checks", stage="correctness", checks=self.guard.log.take())

    def end_timing(self) -> None:
        """The checks that close the timing stage (its calls' checks are counted by run_timing)."""
        self.guard.check_after("the timed calls")
        self.channel.send("guard-checks", stage="timing", checks=self.guard.log.take())
