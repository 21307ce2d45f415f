"""The `side-stream` rule (docs/hacks.md #3) on the raw times of the timed calls (timing.py).

Per timed call on cuda the host sees the end event complete (the current stream is done), then
synchronizes the whole device: `gap_ms` is the host time between the two. Work that the call left
running on another stream keeps the device busy after the current stream is done and shows in
every call's gap; an honest call (a side stream joined back before return included) leaves only
the synchronize's own cost, a few microseconds. A busy host (other processes preempting this one)
stretches some calls' gaps and never all of them, so the rule reads the gaps' lower decile:

    lower-decile gap > SIDE_STREAM_GAP_RATIO x median event time + SIDE_STREAM_GAP_SLACK_MS

The ratio keeps a long kernel's own timing noise from counting; the slack is well above a
synchronize's cost (measured in microseconds on the H200) and well below c03's hidden kernel.
The parent's trusted batch (docs/timing.md) times every stream in any case: its one device-wide
synchronize waits for hidden work too.
"""

import statistics
from typing import List

SIDE_STREAM_GAP_RATIO = 0.5
SIDE_STREAM_GAP_SLACK_MS = 0.05
SIDE_STREAM_GAP_QUANTILE = 0.1


def lower_quantile(values: List[float], quantile: float) -> float:
    """The value at `quantile` of the sorted values (nearest rank, rounding down)."""
    ordered = sorted(values)
    return ordered[int(quantile * (len(ordered) - 1))]


def side_stream_problem(times_ms: List[float], gap_ms: List[float], calls: str = "calls") -> str:
    """The `side-stream` finding for cuda timings (`gap_ms` of the timed calls, or of the warm-up
    calls, which have no hold ahead of them: timing.py), or '' when no call left work on another
    stream. `calls` names them in the finding."""
    if not times_ms or not gap_ms:
        return ""
    event = statistics.median(times_ms)
    gap = lower_quantile(gap_ms, SIDE_STREAM_GAP_QUANTILE)
    threshold = SIDE_STREAM_GAP_RATIO * event + SIDE_STREAM_GAP_SLACK_MS
    if gap > threshold:
        return (
            f"after the current stream finished, the device stayed busy for at least {gap:.4f} ms in nine "
            f"{calls} out of ten (lower decile; the call itself took {event:.4f} ms by its events, the rule allows "
            f"{threshold:.4f} ms): work ran on a stream the events do not see; join side streams back to the "
            f"current stream before returning"
        )
    return ""
