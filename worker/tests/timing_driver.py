"""Test support: the parent's side of the candidate's timing stage (docs/timing.md), as
src/eval/candidate-timing-driver.ts drives it: a `step` after every `called` (keep the sampled
calls' outputs, decided only now), three trusted batches (after the warm-up, in the middle and at
the end of the timed calls) timed with this process's clock from `go` to `batch-done`, with the
channel's round trip measured on the reference worker just before, and one output of each batch
kept, chosen after `batch-done`."""

import random
import time
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

PINGS = 3


@dataclass
class Batch:
    calls: int
    elapsed_ms: float
    overhead_ms: List[float]
    samples: List[dict] = field(default_factory=list)


@dataclass
class DrivenTiming:
    timing: Optional[dict]
    batches: List[Batch]
    kept: List[int]


def _ping(reference) -> float:
    started = time.perf_counter()
    reference.send({"type": "ping"})
    assert reference.read_until("pong")["type"] == "pong"
    return (time.perf_counter() - started) * 1e3


class Stopped(Exception):
    """The worker wrote something else than the next message of a batch (a failure, or the end)."""

    def __init__(self, message: Optional[dict]):
        super().__init__(message)
        self.message = message


def _expect(candidate, kind: str) -> dict:
    message = candidate.read_until(kind)
    if message is None or message["type"] != kind:
        raise Stopped(message)
    return message


def _batch(candidate, reference, calls: int, rng: random.Random) -> Batch:
    ready = _expect(candidate, "batch-ready")
    assert ready["calls"] == calls, ready
    overhead = [_ping(reference) for _ in range(PINGS)]
    started = time.perf_counter()
    candidate.send({"type": "go"})
    _expect(candidate, "batch-done")
    elapsed_ms = (time.perf_counter() - started) * 1e3
    candidate.send({"type": "batch-keep", "calls": [rng.randrange(calls)]})
    outputs = _expect(candidate, "batch-outputs")
    return Batch(calls=calls, elapsed_ms=elapsed_ms, overhead_ms=overhead, samples=outputs["samples"])


def drive_timing(candidate, reference, *, warmup_trials: int, perf_trials: int, sample_calls: Sequence[int],
                 batch_calls: int = 4, contents_per_model: Optional[int] = None, seed: int = 0) -> DrivenTiming:
    """Sends `continue` and answers the timing stage until `timing`, a `failure` or the end."""
    rng = random.Random(seed)
    message = {"type": "continue"}
    if contents_per_model is not None:
        message["contents_per_model"] = contents_per_model
    candidate.send(message)
    batches: List[Batch] = []
    kept: List[int] = []
    points = {("warmup", warmup_trials - 1), ("timed", perf_trials // 2 - 1), ("timed", perf_trials - 1)}
    expected = ("warmup", 0) if warmup_trials > 0 else ("timed", 0)
    while True:
        message = candidate.read_until("called", "timing")
        if message is None or message["type"] != "called":
            return DrivenTiming(timing=message, batches=batches, kept=kept)
        phase, index = message["phase"], message["index"]
        assert (phase, index) == expected, (message, expected)
        keep = phase == "timed" and index in sample_calls
        if keep:
            kept.append(index)
        if (phase, index) in points and batch_calls > 0:
            candidate.send({"type": "step", "keep": keep, "next": "batch", "calls": batch_calls})
            keep = False
            try:
                batches.append(_batch(candidate, reference, batch_calls, rng))
            except Stopped as stopped:
                return DrivenTiming(timing=stopped.message, batches=batches, kept=kept)
        last = index + 1 >= (warmup_trials if phase == "warmup" else perf_trials)
        candidate.send({"type": "step", "keep": keep, "next": "end" if last else "call"})
        expected = (("timed", 0) if phase == "warmup" else None) if last else (phase, index + 1)
