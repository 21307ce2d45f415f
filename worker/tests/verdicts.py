"""Test support: the parent's verdict rules (docs/worker-protocol.md, "Verdicts from the guard"),
applied to an Evaluation so that tests assert the verdict a user would see."""

import statistics
from typing import Optional, Tuple

from worker_process import Evaluation

REJECTED_TRIAL_CHECKS = ("input-mutation", "degenerate-output")
FASTER_THAN_LIGHT_RATIO = 0.5


def _failed(judgement: Optional[dict]) -> list:
    return [trial for trial in (judgement or {}).get("trials", []) if not trial["passed"]]


def _strongest(trials: list) -> Optional[dict]:
    for check in REJECTED_TRIAL_CHECKS:
        for trial in trials:
            if trial["check"] == check:
                return trial
    return trials[0] if trials else None


def generalisation_failures(result: Evaluation) -> list:
    """Generalisation trials that raised or did not match their reference."""
    raised = [entry for entry in (result.correctness or {}).get("generalisation", []) if entry["error"]]
    return raised + _failed(result.generalisation_judgement)


TRUSTED_RELATIVE_SLACK = 0.1
OVERHEAD_FACTOR = 1.5


def reported_figure(result: Evaluation) -> Tuple[float, str]:
    """(median ms, source) the parent reports for the candidate: its in-process median unless that
    is below the trusted batches' bound divided by the load factor eager showed beside it
    (src/eval/trusted-bound.ts), else the batches' median."""
    in_process = statistics.median(result.timing["times_ms"])
    eager = (result.anchor or {}).get("eager") or {}
    load = 1.0
    if eager.get("times_ms") and eager.get("batch_ms") and statistics.median(eager["times_ms"]) > 0:
        load = max(1.0, statistics.median(eager["batch_ms"]) / statistics.median(eager["times_ms"]))
    if not result.batches:
        return in_process, "in-process"
    per_call = [max(0.0, batch.elapsed_ms - min(batch.overhead_ms)) / batch.calls for batch in result.batches]
    tight = [batch for batch in result.batches if OVERHEAD_FACTOR * max(batch.overhead_ms) <= 0.5 * batch.elapsed_ms]
    bound = min(max(0.0, batch.elapsed_ms - OVERHEAD_FACTOR * max(batch.overhead_ms)) / batch.calls
                for batch in tight or result.batches) * (1 - TRUSTED_RELATIVE_SLACK) / load
    return (statistics.median(per_call), "trusted-batch") if in_process < bound else (in_process, "in-process")


def verdict(result: Evaluation, *, gate_specialisation: bool = False) -> Tuple[str, Optional[str]]:
    """(verdict, check of the first reason) as the parent decides them."""
    if result.violation is not None:
        return "rejected", "timing-tampered"
    for role in ("reference", "candidate"):
        failure = result.failures.get(role)
        if failure is not None:
            return failure["kind"], failure["check"]
    failed = _strongest(_failed(result.judgement))
    if failed is not None:
        if failed["check"] in REJECTED_TRIAL_CHECKS:
            return "rejected", failed["check"]
        return "incorrect", failed["check"]
    if result.judgement is None or not result.judgement["passed"]:
        return "incorrect", "missing-output"
    if gate_specialisation and generalisation_failures(result):
        return "rejected", "generalisation"
    timed = _strongest(_failed(result.timed_judgement))
    if timed is not None:
        return "rejected", timed["check"] if timed["check"] in REJECTED_TRIAL_CHECKS else "timed-output"
    roofline = result.message("reference", "roofline")
    if result.timing and roofline and roofline.get("lower_bound_ms"):
        if reported_figure(result)[0] < FASTER_THAN_LIGHT_RATIO * roofline["lower_bound_ms"]:
            return "rejected", "faster-than-light"
    return "correct", None
