"""A reference too slow at these sizes for its stage's limit is a `fault` (resource `time`) after its
first trial, with the pace and, where the problem has a batch size, one that would fit
(roles/reference_pace.py): never a kill at the limit, never a verdict. The pace on a clock of the
test's; test_machine_faults.py runs a real reference worker into it."""

import types

import pytest

from kforge_worker.protocol.machine_fault import MachineFault
from kforge_worker.roles.reference_pace import MARGIN, JudgePace, ReferencePace, smaller_batch


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def problem_with(**constants):
    return types.SimpleNamespace(**constants)


def paced(limit_ms, trials, light, load_s, first_s, **constants):
    clock = Clock()
    pace = ReferencePace(limit_ms, clock=clock)
    clock.now += load_s
    pace.trials_begin(problem_with(**constants), trials, light)
    clock.now += first_s
    return pace


def test_a_stage_that_fits_its_limit_goes_on():
    # 2 s of loading, then 5 trials of 40 s and 3 input sets at a third of that: 242 s of 300.
    paced(300_000, 5, 3, load_s=2, first_s=40, batch_size=128).first_done()


def test_a_stage_just_past_its_limit_goes_on_within_the_margin():
    # 5 trials of 70 s: 350 s, past 300 s but within MARGIN (the first trial is the slowest).
    assert 350 <= MARGIN * 300
    paced(300_000, 5, 0, load_s=0, first_s=70, batch_size=128).first_done()


def test_a_stage_far_past_its_limit_is_a_time_fault_with_a_batch_size_that_fits():
    pace = paced(300_000, 5, 3, load_s=5, first_s=100, batch_size=128)
    with pytest.raises(MachineFault) as raised:
        pace.first_done()
    fault = raised.value
    assert (fault.resource, fault.stage) == ("time", "reference")
    # 5 s of loading and the first trial's 100 s, then 100 s x (4 + 3/3) more: 605 s; half the
    # limit at batch_size 128 x 150/605 = 31.7, so the power of two 16.
    assert "first trial took 100 s" in fault.message
    assert "computes 5 trials and 3 timing input sets: about 605 s, more than its limit of 300 s" in fault.message
    assert "at --set batch_size=16 it would take about 150 s or less" in fault.message


def test_no_suggestion_without_a_batch_size_or_below_one():
    with pytest.raises(MachineFault) as raised:
        paced(300_000, 5, 0, load_s=0, first_s=100, dim=4096).first_done()
    assert "--set" not in raised.value.message
    assert smaller_batch(problem_with(batch_size=2), projected_ms=10_000_000, limit_ms=300_000) is None
    assert smaller_batch(problem_with(batch=64), projected_ms=600_000, limit_ms=300_000) == "--set batch=16"


def test_no_limit_said_means_no_projection():
    paced(None, 5, 3, load_s=0, first_s=10_000, batch_size=128).first_done()


def test_time_the_limit_counted_before_the_pace_was_made_is_part_of_the_projection():
    # The audit's limit counts from its process's start: 3 s of imports, then 5 trials of 1.3 s is
    # 9.5 s against 8 s (within the margin of 10 s), 4 s of imports 10.5 s (past it; "about 10 s").
    def pace(spent_ms):
        clock = Clock()
        made = ReferencePace(8000, clock=clock, what="audit", spent_ms=spent_ms)
        made.trials_begin(problem_with(batch_size=64), 5, 0)
        clock.now += 1.3
        return made

    pace(3000).first_done()
    with pytest.raises(MachineFault) as raised:
        pace(4000).first_done()
    assert "the audit computes 5 trials: about 10 s, more than its limit of 8.0 s" in raised.value.message


def judged(limit_ms, kept, compute_s, problem=None):
    """The outputs a JudgePace lets through: `kept[i]` says whether output i's reference is held
    (judged at once), else it is computed again in `compute_s` on the test's clock."""
    clock = Clock()
    pace = JudgePace(limit_ms, problem, clock=clock)
    seen = []
    for entry in pace.paced(range(len(kept)), lambda index: kept[index]):
        clock.now += 0 if kept[entry] else compute_s
        seen.append(entry)
    return seen


def test_a_judgement_that_fits_its_limit_judges_every_output():
    # 8 outputs whose references are computed again in 30 s each: 240 s of 300.
    assert judged(300_000, [False] * 8, 30) == list(range(8))
    # No limit, or one output to compute: nothing to project.
    assert judged(None, [False] * 8, 300) == list(range(8))
    assert judged(1_000, [True, False, True], 300) == [0, 1, 2]


def test_a_judgement_far_past_its_limit_is_a_time_fault_after_its_first_recomputed_output():
    # The first output's reference was kept (judged at once); four of the other five are computed
    # again at 80 s each: 320 s, past 1.25 x 200 s. Counted from the first recomputed one.
    kept = [True, False, True, False, False, False]
    with pytest.raises(MachineFault) as raised:
        judged(200_000, kept, 80, problem_with(batch_size=32))
    fault = raised.value
    assert (fault.resource, fault.stage) == ("time", "judge")
    assert "judging the candidate's 6 outputs computes the reference again for 4 of them" in fault.message
    assert "the first took 80 s" in fault.message
    # Half the limit at batch_size 32 x 100/320 = 10, so the power of two 8.
    assert "about 320 s for the stage, more than its limit of 200 s" in fault.message
    assert "at --set batch_size=8 it would take about 100 s or less" in fault.message
