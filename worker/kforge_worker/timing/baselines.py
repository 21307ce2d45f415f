"""Timing the reference in eager mode and under torch.compile (reference role only), with the
candidate's routine (timing.py) and its own trusted batches (docs/timing.md)."""

import statistics
from typing import Any, List, Optional, Tuple

import torch

from ..protocol.errors import describe_exception, failures_as, first_line
from ..protocol.request import Baselines
from .roofline import tensor_bytes
from .timing import TimingOptions, bound_calls, time_batch, time_calls
from .timing_budget import Budget

TrialSet = Tuple[torch.nn.Module, List[Any]]

#: Trusted batches per baseline, and the host time each aims at (ms).
BATCH_ROUNDS = 3
BATCH_TARGET_MS = 20.0
MAX_BATCH_CALLS = 2000
#: Bytes of outputs a batch holds at once; the outputs of its later calls are dropped as they come
#: (time_batch's `keep`). The candidate's batches are held within the same pool by the parent
#: (BATCH_POOL_BYTES, candidate-timing-driver.ts).
BATCH_POOL_BYTES = 512 * 1024**2


def torch_minor_version() -> str:
    return ".".join(torch.__version__.split("+")[0].split(".")[:2])


def batch_size(per_call_ms: float, target_ms: float = BATCH_TARGET_MS, limit: int = MAX_BATCH_CALLS) -> int:
    """Calls in a batch that should last about `target_ms`, given a call's time (at least one)."""
    if per_call_ms <= 0:
        return limit
    return max(1, min(limit, int(target_ms / per_call_ms + 0.999)))


def kept_outputs(output_bytes: Optional[int]) -> int:
    """Outputs a batch holds at once: as many as fit BATCH_POOL_BYTES, at least one."""
    if not output_bytes or output_bytes <= 0:
        return MAX_BATCH_CALLS
    return max(1, min(MAX_BATCH_CALLS, BATCH_POOL_BYTES // output_bytes))


def batch_figures(
    calls, per_call_ms: float, device: torch.device, rounds: int = BATCH_ROUNDS, output_bytes: Optional[int] = None
) -> List[float]:
    """Per-call ms of `rounds` batches of back-to-back calls, timed by this process's clock; the
    outputs held within BATCH_POOL_BYTES (`output_bytes`: one call's)."""
    size = batch_size(per_call_ms)
    keep = kept_outputs(output_bytes)
    figures = []
    for _ in range(rounds):
        batch = [calls[index % len(calls)] for index in range(size)]
        outputs, elapsed_ms = time_batch(batch, device, keep=keep)
        del outputs
        figures.append(elapsed_ms / size)
    return figures


def timed_entry(calls, settings: Baselines, device: torch.device, l2_bytes: Optional[int]) -> dict:
    """`{"times_ms", "wall_ms", "batch_ms", "warmup_calls", "budget_stopped"}` of one baseline, and on
    cuda `hold_ms` and `exposed_calls` (timing.TimedCalls)."""
    budget = Budget(settings.budget_ms, settings.perf_trials)
    sizes: List[int] = []

    def measure(phase: str, index: int, output: Any) -> None:
        if not sizes:
            sizes.append(tensor_bytes(output))

    timed = time_calls(
        calls,
        settings.warmup_trials,
        settings.perf_trials,
        device,
        l2_bytes,
        after=measure,
        proceed=budget,
        options=TimingOptions(warmup_min_ms=settings.warmup_ms),
    )
    entry = {**timed.figures(device), "budget_stopped": budget.stopped}
    if settings.budget_ms is None or budget.elapsed_ms() < settings.budget_ms:
        entry["batch_ms"] = batch_figures(
            calls, statistics.median(timed.times_ms), device, output_bytes=sizes[0] if sizes else None
        )
    return entry


def time_eager(sets: List[TrialSet], settings: Baselines, device: torch.device, l2_bytes: Optional[int]) -> dict:
    calls = bound_calls(sets)
    with failures_as("invalid_input", "reference-forward", "the reference raised while timed"), torch.no_grad():
        return timed_entry(calls, settings, device, l2_bytes)


def time_compiled(sets: List[TrialSet], settings: Baselines, device: torch.device, l2_bytes: Optional[int]) -> dict:
    """The timed entry, or `{"error": ...}` where torch has no torch.compile or compiling fails.

    Each input set is called once untimed first, so compilation never lands in a timed call."""
    if not hasattr(torch, "compile"):
        return {"error": f"torch {torch_minor_version()} has no torch.compile"}
    try:
        with torch.no_grad():
            calls = bound_calls([(torch.compile(model), inputs) for model, inputs in sets])
            for call in calls:
                call()
            return timed_entry(calls, settings, device, l2_bytes)
    except Exception as exc:
        return {"error": first_line(describe_exception(exc)) or "torch.compile failed"}


def measure_baselines(sets: List[TrialSet], settings: Baselines, device: torch.device, l2_bytes: Optional[int]) -> dict:
    """The fields of the `baseline` message; an entry not asked for is null."""
    return {
        "eager": time_eager(sets, settings, device, l2_bytes) if settings.eager else None,
        "compile": time_compiled(sets, settings, device, l2_bytes) if settings.compile else None,
    }
