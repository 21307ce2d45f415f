"""Judging a candidate's saved outputs against the reference outputs held in this process."""

from dataclasses import dataclass
from typing import Dict, Optional

from . import outputs
from .compare import compare_outputs
from .request import JudgeRequest, JudgedOutput


@dataclass
class ReferenceRecord:
    """One seed's reference: the digest of its inputs (after cast, before the call) and outputs."""

    seed: int
    input_digest: str
    output: outputs.FlatOutput
    output_fp64: Optional[outputs.FlatOutput]


def _empty_trial(seed: int, check: str, message: str, input_mutated: Optional[bool]) -> dict:
    return {
        "seed": seed, "passed": False, "check": check, "message": message,
        "max_abs_error": None, "max_rel_error": None, "mismatch_count": None, "numel": None,
        "fp64_max_abs_error": None, "fp64_max_rel_error": None, "input_mutated": input_mutated,
    }


def judge_trial(record: Optional[ReferenceRecord], entry: JudgedOutput, atol: float, rtol: float) -> dict:
    """One trial of a `judgement`: the comparison, and whether the inputs changed in the call."""
    if record is None:
        return _empty_trial(entry.seed, "missing-output", f"the reference role has no output for seed {entry.seed}", None)
    mutated = None if entry.input_digest is None else entry.input_digest != record.input_digest
    try:
        candidate = outputs.load(entry.path)
    except outputs.OutputFileError as error:
        return _empty_trial(entry.seed, "missing-output", str(error), mutated)
    trial = {"seed": entry.seed, "passed": False, **compare_outputs(record.output, candidate, atol, rtol, record.output_fp64)}
    trial["input_mutated"] = mutated
    if mutated:
        trial["check"] = "input-mutation"
        trial["message"] = "the candidate changed its inputs in place (their bytes differ after the call)"
    trial["passed"] = trial["check"] is None
    return trial


def judge(records: Dict[int, ReferenceRecord], request: JudgeRequest) -> dict:
    """The fields of the `judgement` message."""
    trials = [judge_trial(records.get(entry.seed), entry, request.atol, request.rtol) for entry in request.outputs]
    return {"passed": bool(trials) and all(trial["passed"] for trial in trials), "trials": trials}
