"""The `stage` start/end messages around each stage of a role."""

import time
from contextlib import contextmanager
from typing import Callable, Iterator

from . import sampling_profile
from .errors import StageFailure

_perf_counter_ns = time.perf_counter_ns


@contextmanager
def stage(send: Callable[..., None], name: str) -> Iterator[None]:
    """Writes `start`, runs the block, writes `end` with its duration in ms.

    A StageFailure raised inside is tagged with the stage's name and passed on (no `end`).
    """
    send("stage", stage=name, status="start")
    started_ns = _perf_counter_ns()
    sampling_profile.enter(name)
    try:
        yield
    except StageFailure as failure:
        if failure.stage is None:
            failure.stage = name
        raise
    finally:
        sampling_profile.leave()
    duration_ms = (_perf_counter_ns() - started_ns) / 1e6
    send("stage", stage=name, status="end", duration_ms=round(duration_ms, 3))
