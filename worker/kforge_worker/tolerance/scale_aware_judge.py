"""The judge's second test on problems whose tolerance is degenerate (docs/hacks.md #12).

When the audit of the correctness references finds that a trivial output passes atol/rtol, an
output that passes the plain tolerance must also pass `relative_l2.scale_aware_compare` (relative
L2 error e = ||c - r|| / ||r|| at most the audit's threshold tau, per floating output tensor).
A leaf that fails is classified:

- `degenerate-output` (the parent's verdict: rejected) when it carries no more information than
  a trivial output: it is constant where the reference is not, or e >= TRIVIAL_LIKE_FRACTION x
  e_trivial, where e_trivial = min(e(zeros), e(constant mean)) on that reference (zeros: 1.0);
- `scale-aware-mismatch` (the parent's verdict: incorrect) otherwise: a real attempt that is
  simply wrong by the scale-aware metric.
"""

import math
from typing import List, Optional, Tuple

import torch

from ..problem.precision import comparable
from ..protocol.outputs import FlatOutput
from .relative_l2 import _chunks, scale_aware_compare

TRIVIAL_LIKE_FRACTION = 0.5


def _json_number(value: Optional[float]) -> Optional[float]:
    return value if value is not None and math.isfinite(value) else None


def floating_pairs(reference: FlatOutput, candidate: FlatOutput) -> List[Tuple[torch.Tensor, torch.Tensor]]:
    """(reference, candidate) tensor leaves that the scale-aware metric judges (fp8 read as float32)."""
    return [
        (comparable(ref), comparable(can))
        for ref, can in zip(reference.leaves, candidate.leaves)
        if isinstance(ref, torch.Tensor)
        and isinstance(can, torch.Tensor)
        and (ref.is_floating_point() or ref.is_complex())
        and ref.numel() > 0
    ]


def _finite_values(chunk: torch.Tensor) -> torch.Tensor:
    values = chunk.to(torch.float64) if not chunk.is_complex() else chunk.abs().to(torch.float64)
    return values if bool(torch.isfinite(values).all()) else values[torch.isfinite(values)]


def trivial_error(reference: torch.Tensor) -> float:
    """The smaller relative L2 error of all zeros and of the reference's mean as a constant (over
    its finite values), in float64 a chunk at a time: one pass for the mean, one for the norms."""
    count, total = 0, 0.0
    for chunk in _chunks(reference):
        finite = _finite_values(chunk)
        count += finite.numel()
        total += float(finite.sum())
    if count == 0:
        return 0.0
    mean = total / count
    squares, centred = 0.0, 0.0
    for chunk in _chunks(reference):
        finite = _finite_values(chunk)
        squares += float(torch.dot(finite, finite))
        shifted = finite - mean
        centred += float(torch.dot(shifted, shifted))
    norm = math.sqrt(squares)
    if norm == 0.0:
        return 0.0
    return min(1.0, math.sqrt(centred) / norm)


def is_constant(tensor: torch.Tensor) -> bool:
    values = tensor.detach().reshape(-1)
    if values.numel() <= 1 or values.is_complex() or not bool(torch.isfinite(values).all()):
        return False
    return float(values.max()) == float(values.min())


def judge_scale_aware(
    reference: FlatOutput, candidate: FlatOutput, threshold: float, trivial: Optional[float] = None
) -> dict:
    """`{"passed", "check", "message", "relative_l2_error", "threshold", "trivial_relative_l2_error"}`;
    check is None, `degenerate-output` or `scale-aware-mismatch`. `trivial`: the smallest trivial
    error over the floating leaves where the caller has it already (two passes over each leaf)."""
    pairs = floating_pairs(reference, candidate)
    result = scale_aware_compare([can for _, can in pairs], [ref for ref, _ in pairs], threshold)
    if trivial is None:
        trivial = min((trivial_error(ref) for ref, _ in pairs), default=None)
    outcome = {
        "passed": result["passed"],
        "check": None,
        "message": None,
        "relative_l2_error": _json_number(result["relative_l2_error"]),
        "threshold": result["threshold"],
        "trivial_relative_l2_error": _json_number(trivial),
    }
    if result["passed"]:
        return outcome
    trivial_like = []
    for (ref, can), leaf in zip(pairs, result["leaves"]):
        if leaf["passed"]:
            continue
        error, floor = leaf["relative_l2_error"], trivial_error(ref)
        if (is_constant(can) and not is_constant(ref)) or error >= TRIVIAL_LIKE_FRACTION * floor:
            trivial_like.append((error, floor))
    if trivial_like:
        error, floor = trivial_like[0]
        outcome["check"] = "degenerate-output"
        outcome["message"] = (
            f"the output passes the tolerance only because it is degenerate on this problem (a trivial output "
            f"passes it too): its relative L2 error {error:.3g} is that of a trivial output ({floor:.3g}), "
            f"above the scale-aware threshold {result['threshold']:.3g}"
        )
    else:
        outcome["check"] = "scale-aware-mismatch"
        outcome["message"] = result["message"]
    return outcome
