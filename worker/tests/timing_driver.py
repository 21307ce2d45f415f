"""Test support: the parent's side of the candidate's timing stage (docs/timing.md), as
src/eval/run/candidate-timing-driver.ts drives it: a `step` after every `called` (keep the sampled
calls' outputs, decided only now), three trusted batches (after the warm-up, in the middle and at
the end of the timed calls) timed with this process's clock from `go` to `batch-done`, with the
channel's round trip measured on the reference worker just before, and one output of each batch
kept, chosen after `batch-done`."""

import random
import time
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

PINGS = 3
BATCH_TARGET_MS = 50.0
BATCH_OVERHEAD_MULTIPLE = 25
MAX_BATCH_CALLS = 5000
#: Input and output bytes one batch may hold at once (candidate-timing-driver.ts, BATCH_POOL_BYTES).
BATCH_POOL_BYTES = 512 * 1024**2


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
    #: Why the parent would stop the candidate for breaking the timing protocol (`timing-tampered`).
    violation: Optional[str] = None


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


#: Messages that end the dialogue without a breach: the candidate's failure, a machine fault.
ENDINGS = ("failure", "fault")

#: Messages that may come between any two of the timing dialogue's (the parent records them).
INFORMATIONAL = ("stage", "guard", "guard-checks", "build-info")


def next_message(worker) -> Optional[dict]:
    """The next message that is not informational (a forged one included), or None at the end."""
    while True:
        message = worker.next_message()
        if message is None or message["type"] not in INFORMATIONAL:
            return message


def _expect(candidate, kind: str) -> dict:
    message = next_message(candidate)
    if message is None or message["type"] != kind:
        raise Stopped(message)
    return message


def _batch(candidate, calls: int, overhead: List[float], rng: random.Random) -> Batch:
    ready = _expect(candidate, "batch-ready")
    if ready["calls"] != calls:
        raise Stopped(ready)
    started = time.perf_counter()
    candidate.send({"type": "go"})
    _expect(candidate, "batch-done")
    elapsed_ms = (time.perf_counter() - started) * 1e3
    candidate.send({"type": "batch-keep", "calls": [rng.randrange(calls)]})
    outputs = _expect(candidate, "batch-outputs")
    return Batch(calls=calls, elapsed_ms=elapsed_ms, overhead_ms=overhead, samples=outputs["samples"])


def _batch_calls(
    batches: List[Batch],
    spacing_ms: float,
    fixed: Optional[int],
    models: int,
    round_trip_ms: float,
    call_bytes: Optional[int] = None,
) -> int:
    """The TypeScript driver's sizing: at least BATCH_TARGET_MS, and BATCH_OVERHEAD_MULTIPLE round
    trips, of the slowest per-call figure known, within BATCH_POOL_BYTES of fresh inputs and
    outputs (`call_bytes` a call, the reference's roofline; at least one call)."""
    if fixed is not None:
        return fixed
    per_call = batches[-1].elapsed_ms / batches[-1].calls if batches else spacing_ms
    target = max(BATCH_TARGET_MS, BATCH_OVERHEAD_MULTIPLE * round_trip_ms)
    wanted = int(target / per_call + 0.999) if per_call > 0 else MAX_BATCH_CALLS
    by_memory = BATCH_POOL_BYTES // call_bytes if call_bytes else MAX_BATCH_CALLS
    limit = max(1, min(MAX_BATCH_CALLS, by_memory))
    return max(1, min(limit, max(models, wanted)))


def drive_timing(
    candidate,
    reference,
    *,
    warmup_trials: int,
    perf_trials: int,
    sample_calls: Sequence[int],
    warmup_calls: Optional[int] = None,
    models: int,
    batch_calls: Optional[int] = None,
    contents_per_model: Optional[int] = None,
    seed: int = 0,
    call_bytes: Optional[int] = None,
) -> DrivenTiming:
    """Sends `continue` and answers the timing stage until `timing`, a `failure` (or a `fault`: the
    machine's, as the parent takes it) or the end. `batch_calls` fixes the batches' size (None:
    sized as the TypeScript driver does, within BATCH_POOL_BYTES by `call_bytes`). `warmup_calls`:
    the warm-up calls asked for (a warm-up by time goes past `warmup_trials`; default that many)."""
    warmup_calls = warmup_trials if warmup_calls is None else warmup_calls
    rng = random.Random(seed)
    message = {"type": "continue"}
    if contents_per_model is not None:
        message["contents_per_model"] = contents_per_model
    candidate.send(message)
    batches: List[Batch] = []
    kept: List[int] = []
    points = {("warmup", warmup_calls - 1), ("timed", perf_trials // 2 - 1), ("timed", perf_trials - 1)}
    expected = ("warmup", 0) if warmup_calls > 0 else ("timed", 0)
    last_called, spacing = None, float("inf")
    while expected is not None:
        message = next_message(candidate)
        if message is None or message["type"] in ENDINGS:
            return DrivenTiming(timing=message, batches=batches, kept=kept)
        if message["type"] != "called" or (message["phase"], message["index"]) != expected:
            return DrivenTiming(
                timing=message, batches=batches, kept=kept, violation=f"expected `called` for {expected}, got {message}"
            )
        now = time.perf_counter()
        if last_called is not None:
            spacing = min(spacing, (now - last_called) * 1e3)
        last_called = now
        phase, index = expected
        keep = phase == "timed" and index in sample_calls
        if keep:
            kept.append(index)
        if (phase, index) in points and batch_calls != 0:
            overhead = [_ping(reference) for _ in range(PINGS)]
            calls = _batch_calls(batches, spacing, batch_calls, models, max(overhead), call_bytes)
            candidate.send({"type": "step", "keep": keep, "next": "batch", "calls": calls})
            keep = False
            try:
                batches.append(_batch(candidate, calls, overhead, rng))
            except Stopped as stopped:
                message = stopped.message
                wrong = message is not None and message["type"] not in ENDINGS
                return DrivenTiming(
                    timing=message, batches=batches, kept=kept, violation=f"a batch got {message}" if wrong else None
                )
        last = index + 1 >= (warmup_calls if phase == "warmup" else perf_trials)
        candidate.send({"type": "step", "keep": keep, "next": "end" if last else "call"})
        expected = (("timed", 0) if phase == "warmup" else None) if last else (phase, index + 1)
    timing = next_message(candidate)
    if timing is not None and timing["type"] not in ("timing", *ENDINGS):
        return DrivenTiming(timing=timing, batches=batches, kept=kept, violation=f"expected `timing`, got {timing}")
    return DrivenTiming(timing=timing, batches=batches, kept=kept)
