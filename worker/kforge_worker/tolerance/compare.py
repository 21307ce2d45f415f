"""Leaf-by-leaf comparison of a candidate's output with the reference's.

A tensor element passes when |c − r| ≤ atol + rtol·|r| (torch.allclose's rule), computed in
float64 (fp8 widened through float32, exactly); NaN or ±Inf in the candidate where the reference
is finite is a mismatch (check `nan`); non-finite reference values must be matched exactly (NaN by
NaN), in chunks (chunking.py) so that the float64 temporaries do not grow with the output. Errors are reported over the
elements where both are finite: max absolute |c − r|, and max relative |c − r| / |r| over the
elements where r ≠ 0. Checks, strongest first: structure, shape, dtype, nan, mismatch.
"""

import math
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import torch

from ..problem.precision import comparable
from ..protocol.outputs import FlatOutput, leaf_name
from .chunking import spans

CHECK_ORDER = ("structure", "shape", "dtype", "nan", "mismatch")


@dataclass
class LeafResult:
    check: Optional[str] = None
    message: Optional[str] = None
    mismatch_count: int = 0
    numel: int = 0
    max_abs_error: Optional[float] = None
    max_rel_error: Optional[float] = None
    first_mismatch: Optional[dict] = None


def _finite_or_none(value: Optional[float]) -> Optional[float]:
    return value if value is not None and math.isfinite(value) else None


def _max(values: List[Optional[float]]) -> Optional[float]:
    present = [value for value in values if value is not None]
    return max(present) if present else None


def _wide(tensor: torch.Tensor) -> torch.Tensor:
    """float64 (complex128) copy of a chunk; fp8 through float32, where every fp8 value is exact."""
    return comparable(tensor).to(torch.complex128 if tensor.is_complex() else torch.float64)


def _unravel(flat_index: int, shape: Tuple[int, ...]) -> Tuple[int, ...]:
    index = []
    for size in reversed(shape):
        index.append(flat_index % size)
        flat_index //= size
    return tuple(reversed(index))


def _scalar(value: torch.Tensor) -> Any:
    """One element as JSON can carry it: a float, or "nan", "inf", "-inf", or text for a complex value."""
    if value.is_complex():
        return str(complex(value))
    number = float(comparable(value))
    return number if math.isfinite(number) else str(number)


def first_mismatch_at(reference: torch.Tensor, candidate: torch.Tensor, flat_index: int) -> dict:
    """The element at `flat_index` (row-major) of both tensors: its index, expected and actual values."""
    return {
        "index": list(_unravel(flat_index, tuple(reference.shape))),
        "expected": _scalar(reference.reshape(-1)[flat_index]),
        "actual": _scalar(candidate.reshape(-1)[flat_index]),
    }


def _beside(candidate: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
    """The candidate's tensor on the reference's device: a judged output is read from its file onto
    the CPU, and the reference role keeps its outputs where they were computed (the GPU)."""
    return candidate if candidate.device == reference.device else candidate.to(reference.device)


@dataclass
class _Scan:
    """What one pass over a pair of tensors found, chunk by chunk."""

    max_abs: Optional[float] = None
    max_rel: Optional[float] = None
    mismatch_count: int = 0
    nan_count: int = 0
    first_mismatch: Optional[int] = None
    first_nan: Optional[int] = None


def _first(mask: torch.Tensor, offset: int) -> int:
    return offset + int(torch.nonzero(mask)[0])


def _scan(reference: torch.Tensor, candidate: torch.Tensor, atol: Optional[float], rtol: Optional[float]) -> _Scan:
    """Errors over the elements finite in both (float64, on the reference's device), and with a
    tolerance the mismatches and NaN/Inf where the reference is finite, one chunk at a time."""
    ref_all = reference.reshape(-1)
    can_all = _beside(candidate, reference).reshape(-1)
    scan = _Scan()
    any_finite = False
    for start, stop in spans(ref_all.numel(), reference.device):
        ref, can = _wide(ref_all[start:stop]), _wide(can_all[start:stop])
        ref_finite, can_finite = torch.isfinite(ref), torch.isfinite(can)
        both_finite = ref_finite & can_finite
        # In-place steps and masked fills: the float64 temporaries alive at once are the two
        # widened chunks, the difference, the magnitude and two more (size_estimate.CHUNK_TEMPORARIES).
        difference = can.sub(ref).abs_()
        magnitude = ref.abs()
        if bool(both_finite.any()):
            any_finite = True
            outside = ~both_finite
            chunk_abs = float(difference.masked_fill(outside, 0).max())
            scan.max_abs = chunk_abs if scan.max_abs is None else max(scan.max_abs, chunk_abs)
            zero = outside | (magnitude == 0)
            chunk_rel = float(difference.div(magnitude.masked_fill(zero, 1)).masked_fill_(zero, 0).max())
            scan.max_rel = chunk_rel if scan.max_rel is None else max(scan.max_rel, chunk_rel)
        if atol is None or rtol is None:
            continue
        same_non_finite = ~ref_finite & ((can == ref) | (torch.isnan(can) & torch.isnan(ref)))
        within = ref_finite & (difference <= magnitude.mul_(rtol).add_(atol))
        bad = ~(within | same_non_finite)
        bad_count = int(torch.count_nonzero(bad))
        scan.mismatch_count += bad_count
        if bad_count and scan.first_mismatch is None:
            scan.first_mismatch = _first(bad, start)
        not_finite = ref_finite & ~can_finite
        nan_count = int(torch.count_nonzero(not_finite))
        scan.nan_count += nan_count
        if nan_count and scan.first_nan is None:
            scan.first_nan = _first(not_finite, start)
        del ref, can, difference, magnitude, bad, within, same_non_finite, not_finite
    if not any_finite:
        scan.max_abs = scan.max_rel = None
    return scan


def tensor_errors(reference: torch.Tensor, candidate: torch.Tensor) -> Tuple[Optional[float], Optional[float]]:
    """(max abs error, max rel error) over elements finite in both; None where there are none.
    Computed in float64 on the reference's device, a chunk at a time."""
    scan = _scan(reference, candidate, None, None)
    return _finite_or_none(scan.max_abs), _finite_or_none(scan.max_rel)


def compare_tensor(reference: torch.Tensor, candidate: torch.Tensor, atol: float, rtol: float, name: str) -> LeafResult:
    """Compares two tensors of the same shape (checked by the caller), a chunk at a time."""
    result = LeafResult(numel=reference.numel())
    scan = _scan(reference, candidate, atol, rtol)
    result.max_abs_error, result.max_rel_error = _finite_or_none(scan.max_abs), _finite_or_none(scan.max_rel)
    result.mismatch_count = scan.mismatch_count
    if scan.nan_count:
        first = _unravel(scan.first_nan, tuple(reference.shape))
        result.first_mismatch = first_mismatch_at(reference, candidate, scan.first_nan)
        result.check = "nan"
        result.message = (
            f"{name} has {scan.nan_count} NaN/Inf values where the reference is finite (first at index {first})"
        )
    elif result.mismatch_count:
        first = _unravel(scan.first_mismatch, tuple(reference.shape))
        result.first_mismatch = first_mismatch_at(reference, candidate, scan.first_mismatch)
        result.check = "mismatch"
        result.message = (
            f"{name}: {result.mismatch_count} of {result.numel} elements differ by more than "
            f"atol {atol:g} + rtol {rtol:g}·|reference| (max abs error {result.max_abs_error:.4g}, "
            f"first at index {first})"
        )
    return result


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def compare_value(reference: Any, candidate: Any, atol: float, rtol: float, name: str) -> LeafResult:
    """Compares two non-tensor leaves: numbers within tolerance, anything else exactly."""
    result = LeafResult(numel=1)
    if _is_number(reference) and _is_number(candidate):
        difference = abs(candidate - reference)
        both_nan = math.isnan(reference) and math.isnan(candidate)
        equal = both_nan or candidate == reference or difference <= atol + rtol * abs(reference)
        if math.isfinite(difference):
            result.max_abs_error = float(difference)
            result.max_rel_error = float(difference / abs(reference)) if reference else 0.0
    else:
        equal = type(reference) is type(candidate) and reference == candidate
    if not equal:
        result.check, result.mismatch_count = "mismatch", 1
        result.message = f"{name} is {candidate!r}, the reference's is {reference!r}"
    return result


def _structure_problem(reference: FlatOutput, candidate: FlatOutput) -> Optional[str]:
    if candidate.skeleton != reference.skeleton or len(candidate.leaves) != len(reference.leaves):
        return f"the output's structure is {candidate.skeleton}, the reference's is {reference.skeleton}"
    count = len(reference.leaves)
    for index, (ref_info, can_info) in enumerate(zip(reference.leaf_info, candidate.leaf_info)):
        name = leaf_name(index, count)
        if can_info["type"].startswith("tensor-subclass:"):
            return (
                f"{name} is a {can_info['type'].split(':', 1)[1]} (a torch.Tensor subclass), not a plain torch.Tensor"
            )
        ref_is_tensor, can_is_tensor = ref_info["type"] == "tensor", can_info["type"] == "tensor"
        both_numbers = _is_number(reference.leaves[index]) and _is_number(candidate.leaves[index])
        if ref_is_tensor != can_is_tensor or (ref_info["type"] != can_info["type"] and not both_numbers):
            return f"{name} is a {can_info['type']}, the reference's is a {ref_info['type']}"
        if ref_is_tensor and ref_info.get("device") != can_info.get("device"):
            return f"{name} is on {can_info.get('device')}, the reference's is on {ref_info.get('device')}"
    return None


def _leaf_results(reference: FlatOutput, candidate: FlatOutput, atol: float, rtol: float) -> List[LeafResult]:
    count = len(reference.leaves)
    results = []
    for index, (ref, can) in enumerate(zip(reference.leaves, candidate.leaves)):
        name = leaf_name(index, count)
        if not isinstance(ref, torch.Tensor):
            results.append(compare_value(ref, can, atol, rtol, name))
        elif tuple(can.shape) != tuple(ref.shape):
            results.append(
                LeafResult(
                    check="shape",
                    numel=ref.numel(),
                    message=f"{name} has shape {tuple(can.shape)}, the reference's is {tuple(ref.shape)}",
                )
            )
        else:
            result = compare_tensor(ref, can, atol, rtol, name)
            if can.dtype != ref.dtype:
                result.check = "dtype"
                result.message = f"{name} has dtype {can.dtype}, the reference's is {ref.dtype}"
            results.append(result)
    return results


def fp64_errors(reference_fp64: Optional[FlatOutput], candidate: FlatOutput) -> Tuple[Optional[float], Optional[float]]:
    """The candidate's error against the float64 reference, or (None, None) where it cannot be had."""
    if reference_fp64 is None or reference_fp64.skeleton != candidate.skeleton:
        return None, None
    abs_errors, rel_errors = [], []
    for ref, can in zip(reference_fp64.leaves, candidate.leaves):
        if isinstance(ref, torch.Tensor) != isinstance(can, torch.Tensor):
            return None, None
        if isinstance(ref, torch.Tensor):
            if tuple(ref.shape) != tuple(can.shape):
                return None, None
            max_abs, max_rel = tensor_errors(ref, can)
        else:
            leaf = compare_value(ref, can, 0.0, 0.0, "")
            max_abs, max_rel = leaf.max_abs_error, leaf.max_rel_error
        abs_errors.append(max_abs)
        rel_errors.append(max_rel)
    return _max(abs_errors), _max(rel_errors)


def compare_outputs(
    reference: FlatOutput, candidate: FlatOutput, atol: float, rtol: float, reference_fp64: Optional[FlatOutput] = None
) -> dict:
    """The comparison fields of one judged trial: check, message, errors, counts (JSON-ready)."""
    fp64_abs, fp64_rel = fp64_errors(reference_fp64, candidate)
    outcome = {
        "check": None,
        "message": None,
        "max_abs_error": None,
        "max_rel_error": None,
        "mismatch_count": None,
        "numel": sum(leaf.numel() if isinstance(leaf, torch.Tensor) else 1 for leaf in reference.leaves),
        "fp64_max_abs_error": fp64_abs,
        "fp64_max_rel_error": fp64_rel,
        "first_mismatch": None,
    }
    problem = _structure_problem(reference, candidate)
    if problem is not None:
        outcome.update(check="structure", message=problem)
        return outcome
    results = _leaf_results(reference, candidate, atol, rtol)
    failing = [result for result in results if result.check is not None]
    if failing:
        worst = min(failing, key=lambda result: CHECK_ORDER.index(result.check))
        leaf = results.index(worst)
        first = (
            None
            if worst.first_mismatch is None
            else {**worst.first_mismatch, "leaf": leaf if len(results) > 1 else None}
        )
        outcome.update(check=worst.check, message=worst.message, first_mismatch=first)
    if not any(result.check == "shape" for result in results):
        outcome.update(
            max_abs_error=_max([result.max_abs_error for result in results]),
            max_rel_error=_max([result.max_rel_error for result in results]),
            mismatch_count=sum(result.mismatch_count for result in results),
        )
    return outcome
