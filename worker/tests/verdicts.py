"""Test support: the parent's verdict rules (docs/worker-protocol.md, "Verdicts from the guard"),
applied to an Evaluation so that tests assert the verdict a user would see."""

import statistics
from typing import List, Optional, Tuple

from worker_process import Evaluation

REJECTED_TRIAL_CHECKS = ("input-mutation", "degenerate-output", "handover", "handover-window")
#: Rejections the policy decides from what ran: a wrong answer handed over before one is said first.
POLICY_CHECKS = ("torch-fallback", "own-kernel", "silent-fallback")
FASTER_THAN_LIGHT_RATIO = 0.5
#: Policies under which PyTorch compute (and so a substituted operator) is a rejection.
REJECTING_POLICIES = ("own-kernels", "strict")
#: Operators that count as the same computation when the reference runs any of them.
FAMILIES = {
    "matrix-product": ("mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "addmv", "mv", "dot", "addmm_activation"),
    "convolution": (
        "convolution",
        "conv1d",
        "conv2d",
        "conv3d",
        "cudnn_convolution",
        "mkldnn_convolution",
        "slow_conv2d_forward",
        "slow_conv3d_forward",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "convolution_overrideable",
        "thnn_conv2d",
    ),
    "softmax": ("softmax", "log_softmax"),
    "clamp": ("relu", "clamp_min", "clamp_max", "clamp", "threshold", "relu6", "hardtanh"),
    "layer-norm": ("layer_norm", "native_layer_norm"),
    "batch-norm": (
        "batch_norm",
        "native_batch_norm",
        "native_batch_norm_legit",
        "native_batch_norm_legit_no_training",
        "cudnn_batch_norm",
        "miopen_batch_norm",
    ),
}
_FAMILY_OF = {member: family for family, members in FAMILIES.items() for member in members}


def operator_family(name: str) -> str:
    """`aten::_softmax` → `softmax`; `aten::addmm` → `matrix-product`; `aten::add.Tensor` → `add`."""
    base = name.split("::", 1)[-1].split(".")[0].lstrip("_")
    return _FAMILY_OF.get(base, base)


def substituted_ops(result: Evaluation) -> list:
    """The candidate's PyTorch operators that did work (`compute`) and that the reference never runs
    (the parent's rule, src/eval/run/attribution-report.ts)."""
    attribution = result.message("candidate", "attribution")
    reference = result.message("reference", "reference-ops")
    if attribution is None or reference is None or reference["unavailable"] or attribution["unavailable"]:
        return []
    families = {operator_family(entry["op"]) for entry in reference["ops"]}
    return [
        entry["op"]
        for entry in attribution["torch_ops"]
        if operator_family(entry["op"]) not in families and entry.get("compute", True)
    ]


def _policy(result: Evaluation) -> Optional[str]:
    guard = result.message("candidate", "guard")
    return guard["policy"] if guard is not None else None


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


def batch_per_call(result: Evaluation) -> List[float]:
    """Per-call ms of each trusted batch, less its smallest measured overhead."""
    return [max(0.0, batch.elapsed_ms - min(batch.overhead_ms)) / batch.calls for batch in result.batches]


def reported_figure(result: Evaluation) -> Tuple[float, str]:
    """(median ms, source) the parent reports for the candidate: its in-process median unless that
    is below the trusted batches' bound divided by the load factor eager showed beside it (its
    batches over its single calls' host-inclusive times: src/eval/timing/trusted-bound.ts), else
    the batches' median."""
    in_process = statistics.median(result.timing["times_ms"])
    eager = (result.anchor or {}).get("eager") or {}
    single = eager.get("wall_ms") or eager.get("times_ms")
    load = 1.0
    if single and eager.get("batch_ms") and statistics.median(single) > 0:
        load = max(1.0, statistics.median(eager["batch_ms"]) / statistics.median(single))
    if not result.batches:
        return in_process, "in-process"
    per_call = batch_per_call(result)
    tight = [batch for batch in result.batches if OVERHEAD_FACTOR * max(batch.overhead_ms) <= 0.5 * batch.elapsed_ms]
    bound = (
        min(
            max(0.0, batch.elapsed_ms - OVERHEAD_FACTOR * max(batch.overhead_ms)) / batch.calls
            for batch in tight or result.batches
        )
        * (1 - TRUSTED_RELATIVE_SLACK)
        / load
    )
    return (statistics.median(per_call), "trusted-batch") if in_process < bound else (in_process, "in-process")


def verdict(result: Evaluation, *, gate_specialisation: bool = False) -> Tuple[str, Optional[str]]:
    """(verdict, check of the first reason) as the parent decides them."""
    if result.violation is not None:
        return "rejected", "timing-tampered"
    fault = result.timing if result.timing is not None and result.timing.get("type") == "fault" else None
    if fault is not None:  # the machine's: no verdict (the parent exits 2)
        return "machine-fault", fault.get("resource")
    substituted = substituted_ops(result) if _policy(result) in REJECTING_POLICIES else []
    for role in ("reference", "candidate"):
        failure = result.failures.get(role)
        if failure is not None:
            if role == "candidate" and failure["kind"] == "rejected" and failure["check"] in POLICY_CHECKS:
                handed = [trial for name, trial in result.handed.items() if name.startswith("correctness-")]
                wrong = _strongest(_failed({"trials": handed}))
                if wrong is not None:
                    return ("rejected" if wrong["check"] in REJECTED_TRIAL_CHECKS else "incorrect"), wrong["check"]
            if role == "candidate" and failure["check"] == "torch-fallback" and substituted:
                return "rejected", "substituted-op"
            return failure["kind"], failure["check"]
    if result.exit_codes.get("candidate", 0) < 0:  # died of a signal without a word (worker-end-outcome.ts)
        return "crashed", "crash"
    failed = _strongest(_failed(result.judgement))
    if failed is not None:
        if failed["check"] in REJECTED_TRIAL_CHECKS:
            return "rejected", failed["check"]
        return "incorrect", failed["check"]
    if result.judgement is None or not result.judgement["passed"]:
        return "incorrect", "missing-output"
    if gate_specialisation and generalisation_failures(result):
        return "rejected", "generalisation"
    if substituted:
        return "rejected", "substituted-op"
    timed = _strongest(_failed(result.timed_judgement))
    if timed is not None:
        return "rejected", timed["check"] if timed["check"] in REJECTED_TRIAL_CHECKS else "timed-output"
    roofline = result.message("reference", "roofline")
    if result.timing and roofline and roofline.get("lower_bound_ms"):
        if reported_figure(result)[0] < FASTER_THAN_LIGHT_RATIO * roofline["lower_bound_ms"]:
            return "rejected", "faster-than-light"
    return "correct", None
