"""The `stage` start/end messages around each stage of a role."""

import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

from ..device.memory_usage import StagePeaks
from . import sampling_profile
from .errors import StageFailure
from .machine_fault import MachineFault

_perf_counter_ns = time.perf_counter_ns


def stage_of(error: BaseException) -> Optional[str]:
    """The stage an exception left, as `stage` tagged it (None: raised between stages)."""
    return getattr(error, "stage", None) if isinstance(getattr(error, "stage", None), str) else None


@contextmanager
def stage(send: Callable[..., None], name: str) -> Iterator[None]:
    """Writes `start`, runs the block, writes `end` with its duration in ms and the process's memory
    peaks during the stage (memory_usage.py: `{"device_peak_bytes", "host_peak_bytes"}`).

    An exception raised inside is tagged with the stage's name (`stage`) and passed on (no `end`).
    """
    send("stage", stage=name, status="start")
    peaks = StagePeaks()
    peaks.start()
    started_ns = _perf_counter_ns()
    sampling_profile.enter(name)
    try:
        yield
    except (StageFailure, MachineFault) as failure:
        if failure.stage is None:
            failure.stage = name
        raise
    except Exception as error:
        if stage_of(error) is None:
            try:
                error.stage = name
            except AttributeError:
                pass
        raise
    finally:
        sampling_profile.leave()
    duration_ms = (_perf_counter_ns() - started_ns) / 1e6
    send("stage", stage=name, status="end", duration_ms=round(duration_ms, 3), memory=peaks.end())
