"""The timing stage's time budget, where this process decides it (the reference role's baselines;
the candidate's budget is the parent's, docs/timing.md): warm-up calls stop once a tenth of the
budget is spent (after one call at least), timed calls once the budget is spent, never before
MIN_BUDGET_CALLS timed calls (or all of them, when fewer were asked for)."""

import time
from typing import Optional

MIN_BUDGET_CALLS = 10
WARMUP_SHARE = 0.1

_perf_counter_ns = time.perf_counter_ns


class Budget:
    """A `proceed` hook for timing.time_calls; `stopped` says whether it ended the timed calls early."""

    def __init__(self, budget_ms: Optional[float], perf_trials: int) -> None:
        self.budget_ms, self.perf_trials = budget_ms, perf_trials
        self.started_ns = _perf_counter_ns()
        self.stopped = False

    def elapsed_ms(self) -> float:
        return (_perf_counter_ns() - self.started_ns) / 1e6

    def __call__(self, phase: str, index: int, output=None) -> bool:
        if self.budget_ms is None:
            return True
        if phase == "warmup":
            return self.elapsed_ms() < WARMUP_SHARE * self.budget_ms
        done = index + 1
        if done >= self.perf_trials or done < MIN_BUDGET_CALLS:
            return True
        if self.elapsed_ms() >= self.budget_ms:
            self.stopped = True
            return False
        return True
