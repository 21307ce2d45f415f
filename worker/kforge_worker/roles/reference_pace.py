"""The reference's pace: a problem too slow at these sizes for the reference stage's limit (or the
audit command's) is said after its first trial, not found out at the limit (docs/sizes.md, "Too
slow at these sizes").

At KernelBench's own sizes on a small cpu host one reference trial (the forward in the run's
precision and in float64) can take a minute, and the stage computes one per correctness trial and
per timing input set: it ran into its 300 s limit and was killed, and a batch then tried it twice
more. After the first trial the worker knows the pace: when the trials at that pace would take
more than MARGIN times the stage's limit, it stops with a `fault` (resource `time`: the machine's,
never a verdict) that says how long a trial took, how long the stage would take, and, where the
problem has a batch size, one that would fit.
"""

import time
from typing import Callable, Iterable, Iterator, Optional

from .size_estimate import shrink_order, size_constants
from ..protocol.machine_fault import MachineFault

#: Stop only when the stage would take this many times its limit: the first trial also pays for
#: loading the problem and the first call's set-up, so it is slower than the others.
MARGIN = 1.25
#: A suggested size aims at this share of the limit (the stage also profiles the reference once).
TARGET_SHARE = 0.5
#: A timing input set's record (the run's precision only, no float64 twin, no audit) counted as
#: this share of a correctness trial: low, so that the projection errs towards going on.
LIGHT_SHARE = 1 / 3
#: Names whose value the time of a trial follows in proportion.
BATCH_NAMES = ("batch_size", "batch")


def _seconds(ms: float) -> str:
    seconds = ms / 1000
    return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"


def smaller_batch(problem, projected_ms: float, limit_ms: float) -> Optional[str]:
    """`--set NAME=VALUE` for a batch size at which the stage would take about TARGET_SHARE of its
    limit (the largest power of two that does), or None when the problem has no batch size."""
    constants = size_constants(problem)
    order = [name for name in shrink_order(constants) if name in BATCH_NAMES]
    if not order:
        return None
    name = order[0]
    wanted = constants[name] * TARGET_SHARE * limit_ms / projected_ms
    if wanted < 1:
        return None
    value = 1
    while value * 2 <= wanted:
        value *= 2
    return f"--set {name}={value}"


def _fitting_clause(problem, projected_ms: float, limit_ms: float) -> str:
    """`; at --set NAME=VALUE it would take about … or less` where the problem has a batch size that
    fits (smaller_batch), else nothing."""
    suggestion = smaller_batch(problem, projected_ms, limit_ms) if problem is not None else None
    return f"; at {suggestion} it would take about {_seconds(TARGET_SHARE * limit_ms)} or less" if suggestion else ""


class ReferencePace:
    """Made as the stage starts; `trials_begin()` before its first trial, then its correctness trials
    computed over `paced(seeds)`, which calls `first_done()` once the first is.
    `what` names the limited work in the message: the reference stage, or the audit command;
    `spent_ms`, the time its limit had already counted when the pace was made (the audit's process
    start and imports)."""

    def __init__(
        self, limit_ms: Optional[float], clock=time.monotonic, what: str = "reference stage", spent_ms: float = 0.0
    ):
        self.limit_ms = limit_ms
        self.clock = clock
        self.what = what
        self.spent_ms = spent_ms
        self.stage_started = clock()
        self.problem = None
        self.trials = 0
        self.light = 0
        self.first_started: Optional[float] = None

    def trials_begin(self, problem, trials: int, light: int) -> None:
        """`trials` correctness trials (each with its float64 twin), then `light` timing input sets."""
        self.problem = problem
        self.trials = trials
        self.light = light
        self.first_started = self.clock()

    def paced(self, seeds: Iterable[int]) -> Iterator[int]:
        """`seeds` in order, checking the pace once the caller has computed the first one's trial."""
        for index, seed in enumerate(seeds):
            yield seed
            if index == 0:
                self.first_done()

    def first_done(self) -> None:
        """Raises MachineFault('time') when the stage so far plus its other trials at the first
        one's pace would take more than MARGIN times its limit."""
        if self.limit_ms is None or self.first_started is None:
            return
        now = self.clock()
        first_ms = (now - self.first_started) * 1000
        projected_ms = (
            self.spent_ms + (now - self.stage_started) * 1000 + first_ms * (self.trials - 1 + LIGHT_SHARE * self.light)
        )
        if projected_ms <= MARGIN * self.limit_ms:
            return
        sets = f" and {self.light} timing input sets" if self.light else ""
        raise MachineFault(
            "time",
            f"the reference's first trial took {_seconds(first_ms)} at these sizes on this machine, and the "
            f"{self.what} computes {self.trials} trials{sets}: about "
            f"{_seconds(projected_ms)}, more than its limit of {_seconds(self.limit_ms)}"
            + _fitting_clause(self.problem, projected_ms, self.limit_ms),
            stage="reference",
        )


class JudgePace:
    """The judge stage's pace. A judgement computes the reference again for each output whose
    reference was not kept (at KernelBench's sizes, most of them: the store keeps 512 MiB), so it
    costs about what the reference stage did, under a limit of its own. Made as the stage starts;
    the outputs judged over `paced(entries, kept)`: once the first output whose reference had to be
    computed again is judged, when the stage at that pace (its time so far, plus the other
    recomputed ones at that output's time) would take more than MARGIN times the limit, a `time`
    fault (stage `judge`). Outputs whose reference was kept are judged in moments and not counted."""

    def __init__(self, limit_ms: Optional[float], problem=None, clock=time.monotonic):
        self.limit_ms = limit_ms
        self.problem = problem
        self.clock = clock
        self.started = clock()

    def paced(self, entries: Iterable, kept: Callable[[object], bool]) -> Iterator:
        """`entries` in order; `kept(entry)`: whether its reference is held (asked before it is judged)."""
        held = [(entry, kept(entry)) for entry in entries]
        computed = sum(not is_kept for _, is_kept in held)
        first = True
        for entry, is_kept in held:
            entry_started = self.clock()
            yield entry
            if first and not is_kept:
                first = False
                self.first_done(len(held), computed, (self.clock() - entry_started) * 1000)

    def first_done(self, count: int, computed: int, first_ms: float) -> None:
        if self.limit_ms is None or computed <= 1:
            return
        projected_ms = (self.clock() - self.started) * 1000 + first_ms * (computed - 1)
        if projected_ms <= MARGIN * self.limit_ms:
            return
        raise MachineFault(
            "time",
            f"judging the candidate's {count} outputs computes the reference again for {computed} of them "
            f"(outputs this large are not kept); the first took {_seconds(first_ms)} at these sizes on this "
            f"machine: about {_seconds(projected_ms)} for the stage, more than its limit of "
            f"{_seconds(self.limit_ms)}" + _fitting_clause(self.problem, projected_ms, self.limit_ms),
            stage="judge",
        )
