"""Judging a candidate's handed-over outputs against the reference outputs held in this process."""

from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Tuple, Union

import torch

from ..device.memory_usage import trim_host
from ..protocol import outputs
from ..protocol.handover_receive import HandoverReceiver, Refusal
from ..protocol.request import JudgeRequest, JudgedOutput
from ..problem.stress import DESCRIPTION as STRESS_DESCRIPTION, STRESS_SCALE
from .compare import compare_outputs
from .precision_loss import precision_loss
from .degenerate import TRIVIAL_MARGIN
from .scale_aware_judge import floating_pairs, judge_scale_aware, trivial_error


@dataclass
class ReferenceRecord:
    """One seed's reference: the digest of its inputs (after cast, before the call) and outputs.
    `output_fp64` is the error profile's twin, run in `high_precision_dtype` (`float64`, or
    `float32` where float64 could not run: roles/reference_store.py); None without one."""

    seed: int
    input_digest: str
    output: outputs.FlatOutput
    output_fp64: Optional[outputs.FlatOutput]
    high_precision_dtype: Optional[str] = None
    #: The stressed trial's record: its inputs were scaled and shifted (problem/stress.py).
    stressed: bool = False


#: Checks of a stressed trial that are about the output's values.
STRESSED_CHECKS = ("mismatch", "precision-loss", "nan", "scale-aware-mismatch")
#: The most relative L2 error within which a stressed trial outside its tolerance still passes: ten
#: (STRESS_SCALE) times the tolerance, at most this, and at most TRIVIAL_MARGIN of a trivial
#: output's. Inputs scaled by ten make an operator that depends
#: on differences of its inputs (softmax, exp) ten times as sensitive to their rounding, so an
#: honest kernel in a narrower type (bf16 arithmetic under `kernelbench`'s 1e-2) can leave its
#: elementwise tolerance there by a few percent; what the trial is for (a copy of a near-identity
#: operator's input, an inexact path taken on inputs unlike the checks') is off by far more.
STRESSED_RELATIVE_L2 = 0.1


def _finite(flat: outputs.FlatOutput) -> bool:
    return all(
        bool(torch.isfinite(leaf).all())
        for leaf in flat.leaves
        if isinstance(leaf, torch.Tensor) and (leaf.is_floating_point() or leaf.is_complex())
    )


def _stressed_outcome(trial: dict, record: "ReferenceRecord", candidate: outputs.FlatOutput, tolerance: float) -> None:
    """A stressed trial outside its tolerance: within a relative L2 error of STRESS_SCALE times the
    tolerance (`tolerance`: the larger of atol and rtol), at most STRESSED_RELATIVE_L2, it passes,
    saying why; otherwise (and for a non-finite output) its check becomes `stressed-input`."""
    if trial["check"] not in STRESSED_CHECKS:
        return
    found = trial["message"] or trial["check"]
    if trial["check"] != "nan":
        trivial = min((trivial_error(ref) for ref, _ in floating_pairs(record.output, candidate)), default=None)
        threshold = min(
            STRESSED_RELATIVE_L2, STRESS_SCALE * tolerance, TRIVIAL_MARGIN * (1.0 if trivial is None else trivial)
        )
        scale_aware = judge_scale_aware(record.output, candidate, threshold, trivial)
        trial["scale_aware"] = {key: value for key, value in scale_aware.items() if key not in ("check", "message")}
        # None where the error is not finite (an infinite element where the reference is finite).
        error = scale_aware["relative_l2_error"]
        said = "not finite" if error is None else f"{error:.3g}"
        if scale_aware["passed"]:
            trial["check"] = None
            trial["message"] = (
                f"the stressed trial ({STRESS_DESCRIPTION}) is outside the tolerance ({found}), but its "
                f"relative L2 error {said} is within {threshold:.3g}: rounding that the scaled inputs amplify"
            )
            return
        found = f"{found}; relative L2 error {said}, above {threshold:.3g}"
    trial["message"] = (
        f"on the stressed trial ({STRESS_DESCRIPTION}) the output is wrong: {found}; a kernel must be "
        "right on every input of the problem, not only on inputs that look like the other trials'"
    )
    trial["check"] = "stressed-input"


Lookup = Callable[[int, Optional[int], Optional[dict]], Tuple[Optional[ReferenceRecord], str]]
AuditFor = Callable[[float, float], Optional[dict]]


def _empty_trial(entry: JudgedOutput, check: str, message: str, input_mutated: Optional[bool]) -> dict:
    return {
        "seed": entry.seed,
        "input_seed": entry.input_seed,
        "variant": entry.variant,
        "passed": False,
        "check": check,
        "message": message,
        "max_abs_error": None,
        "max_rel_error": None,
        "mismatch_count": None,
        "numel": None,
        "fp64_max_abs_error": None,
        "fp64_max_rel_error": None,
        "high_precision_dtype": None,
        "input_mutated": input_mutated,
        "scale_aware": None,
        "first_mismatch": None,
    }


def judge_trial(
    record: Optional[ReferenceRecord],
    entry: JudgedOutput,
    candidate: Union[outputs.FlatOutput, Refusal, None],
    atol: float,
    rtol: float,
    audit: Optional[dict] = None,
    missing: str = "",
) -> dict:
    """One trial of a `judgement`: the comparison of the output the judge took (or why it took
    none), whether the inputs changed in the call, and on a degenerate tolerance the scale-aware
    comparison."""
    if record is None:
        why = missing or f"the reference role has no output for seed {entry.seed}"
        return _empty_trial(entry, "missing-output", why, None)
    mutated = None if entry.input_digest is None else entry.input_digest != record.input_digest
    if candidate is None:
        return _empty_trial(entry, "missing-output", f"output {entry.id} was never handed over", mutated)
    if isinstance(candidate, Refusal):
        trial = _empty_trial(entry, candidate.check, candidate.message, mutated)
        trial["numel"] = sum(leaf.numel() if isinstance(leaf, torch.Tensor) else 1 for leaf in record.output.leaves)
        return trial
    if record.stressed and not _finite(record.output):
        trial = _empty_trial(entry, None, None, mutated)
        trial["passed"] = not mutated
        trial["check"] = None if not mutated else "input-mutation"
        trial["message"] = (
            f"the stressed trial ({STRESS_DESCRIPTION}) was not judged: the reference's output on those "
            "inputs is not finite"
            if not mutated
            else "the candidate changed its inputs in place (their bytes differ after the call)"
        )
        return trial
    trial = {
        "seed": entry.seed,
        "input_seed": entry.input_seed,
        "variant": entry.variant,
        "passed": False,
        **compare_outputs(record.output, candidate, atol, rtol, record.output_fp64),
        "high_precision_dtype": record.high_precision_dtype if record.output_fp64 is not None else None,
        "scale_aware": None,
    }
    trial["input_mutated"] = mutated
    if mutated:
        trial["check"] = "input-mutation"
        trial["message"] = "the candidate changed its inputs in place (their bytes differ after the call)"
    elif trial["check"] == "mismatch":
        lost = precision_loss(record.output, record.output_fp64, candidate, atol, rtol)
        if lost is not None:
            trial["check"], trial["message"] = "precision-loss", f"{lost} ({trial['message']})"
    elif trial["check"] is None and audit is not None and audit["degenerate"]:
        scale_aware = judge_scale_aware(record.output, candidate, audit["scale_aware_threshold"])
        trial["check"], trial["message"] = scale_aware.pop("check"), scale_aware.pop("message")
        trial["scale_aware"] = scale_aware
    if record.stressed:
        _stressed_outcome(trial, record, candidate, max(atol, rtol))
    trial["passed"] = trial["check"] is None
    return trial


def _take_and_look_up(receiver: HandoverReceiver, lookup: Lookup, entry: JudgedOutput):
    """(record, why it is missing, the candidate's output or why it was not taken). The output is
    taken before its reference is computed where a reference of the same sizes is already known
    (timed calls), so the candidate waits no longer than the copy; otherwise after."""
    candidate = None
    known = receiver.structure(entry.variant)
    if known is not None:
        candidate = receiver.receive(entry, known)
        if isinstance(candidate, Refusal) and candidate.check in ("structure", "shape"):
            candidate = None  # judged again against this trial's own reference below
    record, missing = lookup(entry.seed, entry.input_seed, entry.variant)
    if record is not None:
        receiver.remember(entry.variant, record.output)
        if candidate is None:
            candidate = receiver.receive(entry, record.output)
    return record, missing, candidate


def judge(
    lookup: Lookup,
    request: JudgeRequest,
    receiver: HandoverReceiver,
    audit_for: Optional[AuditFor] = None,
    paced: Callable[[Iterable[JudgedOutput]], Iterable[JudgedOutput]] = iter,
) -> dict:
    """The fields of the `judgement` message. `paced` walks the outputs (the judge stage's pace,
    roles/reference_pace.py, which may stop the stage after the first)."""
    audit = audit_for(request.atol, request.rtol) if audit_for is not None else None
    trials = []
    for entry in paced(request.outputs):
        record, missing, candidate = _take_and_look_up(receiver, lookup, entry)
        trials.append(judge_trial(record, entry, candidate, request.atol, request.rtol, audit, missing))
        del record, candidate  # a recomputed reference is dropped before the next one is computed
        trim_host()
    return {
        "passed": bool(trials) and all(trial["passed"] for trial in trials),
        "trials": trials,
        "degenerate": bool(audit and audit["degenerate"]),
    }
