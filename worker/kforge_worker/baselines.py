"""Timing the reference in eager mode and under torch.compile (reference role only)."""

from typing import Any, List, Optional, Tuple

import torch

from .errors import describe_exception, failures_as, first_line
from .request import Baselines
from .timing import bound_calls, time_calls

TrialSet = Tuple[torch.nn.Module, List[Any]]


def torch_minor_version() -> str:
    return ".".join(torch.__version__.split("+")[0].split(".")[:2])


def time_eager(sets: List[TrialSet], settings: Baselines, device: torch.device, l2_bytes: Optional[int]) -> dict:
    calls = bound_calls(sets)
    with failures_as("invalid_input", "reference-forward", "the reference raised while timed"), torch.no_grad():
        timed = time_calls(calls, settings.warmup_trials, settings.perf_trials, device, l2_bytes)
    return {"times_ms": timed.times_ms}


def time_compiled(sets: List[TrialSet], settings: Baselines, device: torch.device, l2_bytes: Optional[int]) -> dict:
    """`{"times_ms": [...]}`, or `{"error": ...}` where torch has no torch.compile or compiling fails.

    Each input set is called once untimed first, so compilation never lands in a timed call."""
    if not hasattr(torch, "compile"):
        return {"error": f"torch {torch_minor_version()} has no torch.compile"}
    try:
        with torch.no_grad():
            calls = bound_calls([(torch.compile(model), inputs) for model, inputs in sets])
            for call in calls:
                call()
            timed = time_calls(calls, settings.warmup_trials, settings.perf_trials, device, l2_bytes)
    except Exception as exc:
        return {"error": first_line(describe_exception(exc)) or "torch.compile failed"}
    return {"times_ms": timed.times_ms}


def measure_baselines(sets: List[TrialSet], settings: Baselines, device: torch.device, l2_bytes: Optional[int]) -> dict:
    """The fields of the `baseline` message; an entry not asked for is null."""
    return {
        "eager": time_eager(sets, settings, device, l2_bytes) if settings.eager else None,
        "compile": time_compiled(sets, settings, device, l2_bytes) if settings.compile else None,
    }
