"""Precision lost or a wrong answer: what a trial's measured error profile says when it failed its
tolerance (issue 41: the precision checks judge the measured error, never the casts in the source).

A trial that failed by `mismatch` is looked at again against its high-precision twin t (float64,
float32 where float64 could not run: roles/reference_store.py). For each output leaf, in float64
and a chunk at a time (chunking.py), over the elements finite in c, r and t:

    e_candidate = ||c - t|| / ||t||          the candidate's error against the twin
    e_reference = ||r - t|| / ||t||          the run-precision reference's own error against it
    e_d         = ||round_d(t) - t|| / ||t||   the twin rounded once to a narrower dtype d

where d is float16 or bfloat16, whichever has fewer mantissa bits than the reference output's
dtype (both for float32; bfloat16 for float16; none for bfloat16 or fp8 outputs). The failure is
precision lost (check `precision-loss`; the verdict stays `incorrect`, as for `mismatch`) when

- every leaf is a floating-point tensor (an integer or non-tensor leaf keeps `mismatch`: rounding
  does not explain a wrong index or count),
- on every leaf e_candidate <= ROUNDINGS x e_d for a narrower d whose e_d is finite on every leaf:
  the answer is the exact one to within what arithmetic in d gives (ROUNDINGS allows for the
  rounding a computation in d accumulates beyond rounding its answer once), and
- on every leaf the error is no shift: |mean(c - t)| <= SHIFT x rms(c - t) over the elements
  finite in both (rounding to nearest errs either way; a constant offset or a missing bias of the
  same size errs one way, with a ratio near 1), and
- on some leaf e_candidate > FARTHER x e_reference: the candidate is clearly farther from the exact
  answer than the run's own reference is, so the precision was lost in the candidate.

The message names the narrower dtype whose one rounding comes nearest the candidate's error.
Anything else stays `mismatch`: a wrong answer, or a tolerance tighter than the run precision's
own error. The test is on the error's size and sign only: a wrong kernel whose error is as small as
bfloat16 rounding and as often up as down (an output scaled by 1.001 where it is centred on zero)
is named `precision-loss` too, and is incorrect either way.
"""

import math
from dataclasses import dataclass
from typing import List, Optional

import torch

from ..problem.precision import comparable, dtype_name
from ..protocol.outputs import FlatOutput, leaf_name
from .chunking import spans

#: The narrower dtypes whose arithmetic a precision loss is measured against, finest first.
NARROWER_DTYPES = (torch.float16, torch.bfloat16)
#: How many roundings of the answer a computation in a narrower dtype may accumulate.
ROUNDINGS = 32.0
#: How much farther from the twin than the run's own reference the candidate must be.
FARTHER = 2.0
#: The largest |mean| / rms of the candidate's error that rounding explains.
SHIFT = 0.5


@dataclass(frozen=True)
class _Leaf:
    name: str
    candidate_error: float
    reference_error: float
    #: e_d per narrower dtype, in NARROWER_DTYPES order (None where d is not narrower than the leaf).
    roundings: List[Optional[float]]
    #: |mean(c - t)| / rms(c - t): near 0 for rounding, near 1 for an offset.
    shift: float


def _narrower(dtype: torch.dtype) -> List[bool]:
    eps = torch.finfo(dtype).eps
    return [torch.finfo(narrow).eps > eps for narrow in NARROWER_DTYPES]


def _ratio(squares: float, scale_squares: float) -> float:
    """sqrt(squares / scale_squares): a relative L2 error (0 for no error, inf against all zeros)."""
    if scale_squares == 0.0:
        return 0.0 if squares == 0.0 else math.inf
    return math.sqrt(squares / scale_squares)


def _leaf(name: str, reference: torch.Tensor, twin: torch.Tensor, candidate: torch.Tensor) -> _Leaf:
    """One pass over a leaf in float64, a chunk at a time (chunking.py: four float64
    temporaries of a chunk at once, fewer than a comparison's six, beside GPU-sized outputs), over the
    elements finite in all three tensors."""
    narrower = _narrower(reference.dtype)
    exact_all, candidate_all, reference_all = (
        comparable(value).detach().reshape(-1) for value in (twin, candidate, reference)
    )
    exact_squares = candidate_squares = reference_squares = candidate_sum = 0.0
    rounding_squares = [0.0] * len(NARROWER_DTYPES)
    count = 0
    for start, stop in spans(exact_all.numel(), exact_all.device):
        exact = exact_all[start:stop].to(torch.float64)
        produced = candidate_all[start:stop].to(exact.device, torch.float64) - exact
        own = reference_all[start:stop].to(exact.device, torch.float64) - exact
        finite = torch.isfinite(exact) & torch.isfinite(produced) & torch.isfinite(own)
        if not bool(finite.all()):  # the masked copies only where they are needed
            exact, produced, own = exact[finite], produced[finite], own[finite]
        exact_squares += float(torch.dot(exact, exact))
        candidate_squares += float(torch.dot(produced, produced))
        reference_squares += float(torch.dot(own, own))
        candidate_sum += float(produced.sum())
        count += exact.numel()
        for position, applies in enumerate(narrower):
            if applies:  # a value past the dtype's range rounds to infinity: that dtype cannot explain it
                rounded = exact.to(NARROWER_DTYPES[position]).to(torch.float64).sub_(exact)
                rounding_squares[position] += float(torch.dot(rounded, rounded))
        del exact, produced, own, finite
    shift = 0.0 if candidate_squares == 0.0 else abs(candidate_sum / count) / math.sqrt(candidate_squares / count)
    return _Leaf(
        name,
        _ratio(candidate_squares, exact_squares),
        _ratio(reference_squares, exact_squares),
        [_ratio(squares, exact_squares) if applies else None for squares, applies in zip(rounding_squares, narrower)],
        shift,
    )


def _leaves(reference: FlatOutput, twin: FlatOutput, candidate: FlatOutput) -> Optional[List[_Leaf]]:
    """Each leaf's errors, or None where the output has a leaf rounding cannot explain."""
    if not (len(reference.leaves) == len(twin.leaves) == len(candidate.leaves)) or not reference.leaves:
        return None
    leaves = []
    count = len(reference.leaves)
    for index, (ref, exact, can) in enumerate(zip(reference.leaves, twin.leaves, candidate.leaves)):
        tensors = all(isinstance(leaf, torch.Tensor) for leaf in (ref, exact, can))
        if not tensors or not ref.is_floating_point() or ref.shape != exact.shape or ref.shape != can.shape:
            return None
        leaves.append(_leaf(leaf_name(index, count), ref, exact, can))
    return leaves


def _applicable(leaves: List[_Leaf]) -> List[int]:
    """Indices in NARROWER_DTYPES of the dtypes narrower than the output whose rounding error is
    finite on every leaf (a value past float16's range rounds to infinity)."""
    return [
        position
        for position in range(len(NARROWER_DTYPES))
        if all(leaf.roundings[position] is not None and math.isfinite(leaf.roundings[position]) for leaf in leaves)
    ]


def _explained(leaves: List[_Leaf], positions: List[int]) -> bool:
    """Whether every leaf's error is within ROUNDINGS roundings to one applicable dtype (in effect
    the coarsest, whose one rounding is the largest)."""
    return any(
        all(leaf.candidate_error <= ROUNDINGS * leaf.roundings[position] for leaf in leaves) for position in positions
    )


def _nearest(leaf: _Leaf, positions: List[int]) -> int:
    """The dtype whose one rounding is nearest the leaf's error (by ratio): the one a message names."""

    def distance(position: int) -> float:
        rounding = leaf.roundings[position]
        if rounding <= 0.0 or leaf.candidate_error <= 0.0:
            return math.inf
        return abs(math.log(leaf.candidate_error / rounding))

    return min(positions, key=distance)


def precision_loss(
    reference: FlatOutput,
    twin: Optional[FlatOutput],
    candidate: FlatOutput,
    atol: float,
    rtol: float,
) -> Optional[str]:
    """The `precision-loss` sentence for a trial that failed by `mismatch` (module docs), or None
    where its error profile does not show precision lost (no twin, or a wrong answer)."""
    if twin is None:
        return None
    leaves = _leaves(reference, twin, candidate)
    if leaves is None:
        return None
    if not any(leaf.candidate_error > FARTHER * leaf.reference_error for leaf in leaves):
        return None
    if any(leaf.shift > SHIFT for leaf in leaves):
        return None
    positions = _applicable(leaves)
    if not _explained(leaves, positions):
        return None
    worst = max(leaves, key=lambda leaf: leaf.candidate_error)
    position = _nearest(worst, positions)
    narrow = dtype_name(NARROWER_DTYPES[position])
    run = dtype_name(reference.leaves[0].dtype)
    exact = dtype_name(twin.leaves[0].dtype)
    return (
        f"{worst.name}: its error against the {exact} reference is {worst.candidate_error:.3g} (relative L2), "
        f"against {worst.reference_error:.3g} for the {run} reference, and of the size {narrow} arithmetic gives "
        f"(the {exact} answer rounded once to {narrow}: {worst.roundings[position]:.3g}): precision was lost "
        f"beyond the tolerance (atol {atol:g}, rtol {rtol:g}); keep {run} arithmetic where this tolerance "
        f"applies, or judge it under one that allows {narrow}"
    )
