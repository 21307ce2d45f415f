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
import sys

from ..build.build import CANDIDATE_MODULE_NAME, build_candidate
from ..build.build_info import collect_build_info
from ..build.candidate_kernels import sources as own_kernel_sources
from ..build.source_times import keep_unchanged_source_times
from ..protocol.run_device import resolve_device
from ..device.memory_usage import release_cached
from ..guard import integrity
from ..guard.guard_runtime import GuardRuntime
from ..guard.guard_settings import parse_guard, runtime_checks_enabled
from ..guard.candidate_calls import CandidateCalls
from ..guard.forbidden_names import ForbiddenNames, check_loaded
from ..guard.static_stage import run_static_guard
from ..problem.precision import run_dtype
from ..problem.problem_loader import load_problem, problem_folder, problem_names
from ..protocol.channel import Channel, ProtocolError
from ..protocol.errors import StageFailure
from ..protocol.handover import Handover, HandOverStopped
from ..protocol.request import parse_candidate_request
from ..protocol.stages import stage
from ..timing.timing import changed_timers, timer_identities
from ..timing.timing_dialogue import contents_override
from ..timing.timing_stage import run_timing
from .correctness_stage import run_correctness


def limit_resources() -> None:
    """No core dumps (a crashing candidate must not fill the disk); nothing that would break CUDA."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class Watched:
    """What the candidate must leave alone: the timing functions and the worker's own code."""

    def __init__(self, channel: Channel) -> None:
        self.closures = (channel.send, channel.receive)
        self.timers = timer_identities()
        self.code = integrity.take_snapshot(*self.closures)

    def changed(self):
        return changed_timers(self.timers) + integrity.changed(self.code, *self.closures)


def check_timers(watched: Watched) -> None:
    changed = watched.changed()
    if changed:
        raise StageFailure(
            "rejected",
            "timer-patched",
            f"the candidate replaced timing or channel functions or code of the worker: {', '.join(changed[:8])}",
        )


def check_after(timers: Watched, guard: GuardRuntime, when: str) -> None:
    if guard.enabled:
        check_timers(timers)
    guard.check_state(when)


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
        self.timers = Watched(channel)
        self.guard = GuardRuntime(self.device, self.request.guard.policy, enabled=enabled)
        self.handover = Handover(channel, self.request.handover_pipe, release=release_cached)
        self.await_device = awaits_device(message)
        keep_unchanged_source_times()
        self.build_started_ns = time.time_ns()
        self.problem = None
        self.modules_before = set()

    def build(self):
        """Stage `build`: the problem, the static guard, the build and import of the candidate."""
        request, run, guard, send = self.request, self.request.run, self.guard, self.channel.send
        self.problem = load_problem(run.problem, run.preset, run.overrides)
        gc.collect()
        os.chdir(self.scratch_dir)
        folder = problem_folder(self.problem)
        guard.forbidden = ForbiddenNames.of(folder.forbidden if folder else [])
        findings = run_static_guard(send, request.candidate, request.guard, run.precision, run.problem, guard.forbidden)
        guard.snapshot_state()
        guard.send = send
        self.modules_before = set(sys.modules)
        built = build_candidate(
            request.candidate, request.build_dir, run.backend, self.device, problem_names(self.problem)
        )
        check_loaded(guard.forbidden, self.modules_before, "importing the candidate")
        guard.watch_extensions(built.extensions, findings)
        build_info = collect_build_info(built.shared_objects) if run.backend.build.lists_built_kernels else None
        if build_info is not None:
            send("build-info", **build_info)
        if self.device.type == "cuda" and guard.enabled:
            guard.expect_own_kernels(own_kernel_sources(built.shared_objects, build_info, CANDIDATE_MODULE_NAME))
        guard.refresh_runtime()
        check_after(self.timers, guard, "importing the candidate")
        return built

    def load(self, calls: CandidateCalls) -> None:
        """Stage `load`: ModelNew constructed once, on the first correctness seed."""
        calls.model(self.request.run.correctness_seeds[0])
        alignment = calls.alignment()
        if alignment is not None and self.guard.enabled:
            self.guard.log.record("parameters", "note", alignment)
        self.guard.check_state("constructing ModelNew")

    def end_correctness(self) -> None:
        """The checks that close the correctness stage, and its `guard-checks`."""
        check_loaded(self.guard.forbidden, self.modules_before, "the correctness trials")
        check_after(self.timers, self.guard, "the correctness trials")
        self.guard.record_call_checks()
        self.channel.send("guard-checks", stage="correctness", checks=self.guard.log.take())

    def end_timing(self) -> None:
        """The checks that close the timing stage (its calls' checks are counted by run_timing)."""
        check_after(self.timers, self.guard, "the timed calls")
        self.channel.send("guard-checks", stage="timing", checks=self.guard.log.take())
