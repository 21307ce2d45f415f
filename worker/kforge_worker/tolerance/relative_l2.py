"""The scale-aware metric of degenerate tolerances (degenerate.py, whose docs define it): each output
tensor's relative L2 error ``||c - r||_2 / ||r||_2`` in float64, a chunk at a time where it can,
and the judgement of a candidate's outputs by it (`scale_aware_compare`).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import torch

from .chunking import spans

#: Upper bound of the scale-aware threshold (relative L2 error).
DEFAULT_RELATIVE_L2_THRESHOLD = 1e-2


def _chunks(tensor: torch.Tensor):
    """The tensor's elements a chunk at a time (chunking.py), for the float64 work of the audit
    and the relative L2 error."""
    flat = tensor.detach().reshape(-1)
    for start, stop in spans(flat.numel(), flat.device):
        yield flat[start:stop]


def tensor_leaves(value: Any) -> list[torch.Tensor]:
    """The tensors of a nested output (tuples, lists, dict values), in order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, Mapping):
        return [leaf for item in value.values() for leaf in tensor_leaves(item)]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in tensor_leaves(item)]
    return []


def _floating(tensor: torch.Tensor) -> bool:
    return tensor.is_floating_point() or tensor.is_complex()


def relative_l2_error(candidate: torch.Tensor, reference: torch.Tensor) -> float:
    """``||c - r||_2 / ||r||_2`` in float64 over the reference's finite elements (see module docs)."""
    if candidate.shape != reference.shape:
        return math.inf
    chunked = _chunked_l2_ratio(candidate, reference)
    if chunked is not None:
        return chunked
    r = reference.detach().to(torch.float64).reshape(-1)
    c = candidate.detach().to(r.device, torch.float64).reshape(-1)
    finite = torch.isfinite(r)
    if bool(finite.all()):  # the usual case, without the masked copies below
        if not bool(torch.isfinite(c).all()):
            return math.inf
        return _l2_ratio(float(torch.linalg.vector_norm(c - r)), float(torch.linalg.vector_norm(r)))
    if not bool(torch.isfinite(c[finite]).all()):
        return math.inf
    special_c, special_r = c[~finite], r[~finite]
    if not bool(((special_c == special_r) | (torch.isnan(special_c) & torch.isnan(special_r))).all()):
        return math.inf
    return _l2_ratio(float(torch.linalg.vector_norm(c[finite] - r[finite])), float(torch.linalg.vector_norm(r[finite])))


def _chunked_l2_ratio(candidate: torch.Tensor, reference: torch.Tensor) -> float | None:
    """``||c - r|| / ||r||`` a chunk at a time when both are finite and real (else None: the
    general path handles non-finite values on whole tensors)."""
    if reference.is_complex() or candidate.is_complex():
        return None
    difference_squares, reference_squares = 0.0, 0.0
    for produced, expected in zip(_chunks(candidate), _chunks(reference)):
        r = expected.to(torch.float64)
        c = produced.to(r.device, torch.float64)
        if not (bool(torch.isfinite(r).all()) and bool(torch.isfinite(c).all())):
            return None
        difference = c - r
        difference_squares += float(torch.dot(difference, difference))
        reference_squares += float(torch.dot(r, r))
    return _l2_ratio(math.sqrt(difference_squares), math.sqrt(reference_squares))


def _l2_ratio(difference: float, scale: float) -> float:
    if scale == 0.0:
        return 0.0 if difference == 0.0 else math.inf
    return difference / scale


def scale_aware_compare(candidate: Any, reference: Any, threshold: float | None = None) -> dict[str, Any]:
    """Judge ``candidate`` against ``reference`` by relative L2 error (see the module docs).

    Both are tensors or matching nested structures. ``threshold`` defaults to
    :data:`DEFAULT_RELATIVE_L2_THRESHOLD`; pass ``audit(...)["scale_aware_threshold"]``. Non-float
    tensors must match exactly. Returns ``{"passed", "relative_l2_error" (worst leaf), "threshold",
    "metric": "relative_l2", "leaves": [{"relative_l2_error", "passed"}], "message"}``.
    """
    tau = DEFAULT_RELATIVE_L2_THRESHOLD if threshold is None else float(threshold)
    candidates, references = tensor_leaves(candidate), tensor_leaves(reference)
    if len(candidates) != len(references):
        return {
            "passed": False,
            "relative_l2_error": math.inf,
            "threshold": tau,
            "metric": "relative_l2",
            "leaves": [],
            "message": f"the output has {len(candidates)} tensors, the reference " f"{len(references)}",
        }
    leaves = []
    for produced, expected in zip(candidates, references):
        if _floating(expected):
            error = relative_l2_error(produced, expected)
        else:
            error = (
                0.0
                if produced.shape == expected.shape and bool(torch.equal(produced.cpu(), expected.cpu()))
                else math.inf
            )
        leaves.append({"relative_l2_error": error, "passed": error <= tau})
    worst = max((leaf["relative_l2_error"] for leaf in leaves), default=0.0)
    passed = all(leaf["passed"] for leaf in leaves)
    message = (
        f"relative L2 error {worst:.3g} is within {tau:.3g}"
        if passed
        else f"relative L2 error {worst:.3g} exceeds {tau:.3g}: the tolerance on this problem lets "
        f"trivial outputs pass, so it is judged by ||c - r|| / ||r|| instead"
    )
    return {
        "passed": passed,
        "relative_l2_error": worst,
        "threshold": tau,
        "metric": "relative_l2",
        "leaves": leaves,
        "message": message,
    }
