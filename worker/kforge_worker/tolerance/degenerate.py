"""Degenerate tolerances (docs/hacks.md #12): when a trivial output passes, judge with a scale-aware metric.

Some problems make ``|c - r| <= atol + rtol * |r|`` meaningless: every element of a softmax over
8192 columns is below 0.01, so all zeros pass ``atol = rtol = 1e-2`` (KernelBench issue 165;
norms and min-reductions behave alike). Before trusting the tolerance, :func:`audit` checks
whether any *trivial* output passes it against the reference: zeros, a constant equal to the
reference's mean, ones, and the input itself where an input has the output's shape. If one does,
the problem is degenerate under that tolerance and candidates are judged with
:func:`scale_aware_compare` instead (or as well).

The scale-aware metric, for each output tensor, computed in float64:

    e = ||c - r||_2 / ||r||_2                       (relative L2 error)
    e = inf  if c is NaN/Inf where r is finite, or if the shapes differ
    e = 0 if r and c are both all zero; inf if r is all zero and c is not

A candidate passes when ``e <= tau`` for every output tensor, where

    tau = min(0.01, max(0.1 * e_trivial, 2 * eps(output dtype)))

and ``e_trivial`` is the smallest relative L2 error of the trivial outputs on that reference. The
floor ``2 * eps`` (bfloat16: 0.0156, so tau = 0.01; float16: 0.002; float32: 2.4e-7) keeps tau
above what rounding to the output's own dtype gives: where the input itself is within 1e-3 of the
reference (a LayerNorm over a wide row of standard-normal values), 0.1 * e_trivial is 1e-4, below
the rounding of a correct bfloat16 output, and an honest kernel of a `native` bfloat16 run would
fail it. What the metric cannot tell apart at that precision (a copy of the input is as close as
bfloat16 rounding), the stressed trial does (problem/stress.py: the copy fails it plainly).
Zeros always score ``e = 1``; the constant mean scores ``sigma / sqrt(sigma^2 + mu^2)`` (about 0.8 for
a softmax of standard-normal logits), so ``tau`` is 0.01 unless the reference is nearly constant,
and a trivial output always fails by at least a factor of ten. 0.01 sits above the rounding error
of correct float32 (~1e-7), float16 (~5e-4) and bfloat16 (~4e-3) results. When a trivial output is
*exactly* right (``e_trivial == 0``) the problem itself is degenerate: :func:`audit` says so in
``exact_trivial`` and the verdict should flag the problem, not the kernel.

All functions are pure: they read tensors and return plain dicts of Python values.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import torch

from ..problem.precision import comparable
from .relative_l2 import (
    DEFAULT_RELATIVE_L2_THRESHOLD,
    _chunks,
    _floating,
    _l2_ratio,
    relative_l2_error,
    tensor_leaves,
)

#: The threshold is at most this fraction of the best trivial output's error.
TRIVIAL_MARGIN = 0.1
#: The threshold is at least this many of the output dtype's eps (its rounding, twice over: the
#: candidate's output and the reference's are each rounded to it).
ROUNDING_ULPS = 2

TRIVIAL_OUTPUTS = ("zeros", "mean", "ones", "input")


def passes_tolerance(candidate: torch.Tensor, reference: torch.Tensor, atol: float, rtol: float) -> bool:
    """``|c - r| <= atol + rtol * |r|`` everywhere (float64); NaN/Inf in c where r is finite fails."""
    if candidate.shape != reference.shape:
        return False
    r = reference.detach().to(torch.float64)
    c = candidate.detach().to(r.device, torch.float64)
    finite = torch.isfinite(r)
    if bool(finite.all()):  # the usual case, without the masked copies below
        return bool(torch.isfinite(c).all()) and bool(((c - r).abs() <= atol + rtol * r.abs()).all())
    if not bool(torch.isfinite(c[finite]).all()):
        return False
    close = (c[finite] - r[finite]).abs() <= atol + rtol * r[finite].abs()
    same_special = (c[~finite] == r[~finite]) | (torch.isnan(c[~finite]) & torch.isnan(r[~finite]))
    return bool(close.all()) and bool(same_special.all())


def _trivial(name: str, reference: torch.Tensor, inputs: Sequence[torch.Tensor]) -> torch.Tensor | None:
    if name == "zeros":
        return torch.zeros_like(reference)
    if name == "ones":
        return torch.ones_like(reference)
    if name == "mean":
        finite = reference.detach().double()[torch.isfinite(reference.detach().double())]
        mean = float(finite.mean()) if finite.numel() else 0.0
        return torch.full_like(reference, mean)
    for candidate in inputs:
        if candidate.shape == reference.shape and _floating(candidate):
            return candidate.detach().to(reference.device, reference.dtype)
    return None


class _Reference:
    """One reference leaf of an audit. For a real, finite reference (the usual case) every trivial
    output is compared a chunk at a time in float64 against ``|r|`` and the bound
    ``atol + rtol * |r|``, with ``||r||`` and the mean computed once the same way, so the audit's
    temporaries stay small at any output size; anything else takes the general path of
    passes_tolerance and relative_l2_error on whole tensors."""

    def __init__(self, leaf: torch.Tensor, atol: float, rtol: float):
        self.leaf = leaf
        self.atol, self.rtol = atol, rtol
        self.fast = not leaf.is_complex() and all(bool(torch.isfinite(chunk).all()) for chunk in _chunks(leaf))
        if self.fast:
            total, squares = 0.0, 0.0
            for chunk in _chunks(leaf):
                wide = chunk.to(torch.float64)
                total += float(wide.sum())
                squares += float(torch.dot(wide, wide))
            self.mean = total / max(1, leaf.numel())
            self.norm = math.sqrt(squares)

    def errors(self, name: str, inputs: Sequence[torch.Tensor]) -> tuple[bool, float, float] | None:
        """(passes atol/rtol, max abs error over finite errors, relative L2 error) of a trivial
        output against this reference, or None where it does not apply (no input of its shape)."""
        if self.fast and name in ("zeros", "mean", "ones"):
            # A constant against a finite reference, without making the constant tensor: the same
            # constant as _trivial makes (the mean rounded to the reference's dtype).
            constant = {"zeros": 0.0, "ones": 1.0}.get(name)
            if constant is None:
                constant = float(torch.tensor(self.mean, dtype=self.leaf.dtype))
            return self._summary(_chunks(self.leaf), (None for _ in _chunks(self.leaf)), constant)
        output = _trivial(name, self.leaf, inputs)
        if output is None:
            return None
        if self.fast and all(bool(torch.isfinite(chunk).all()) for chunk in _chunks(output)):
            return self._summary(_chunks(self.leaf), _chunks(output), 0.0)
        value = self.leaf.detach().to(torch.float64)
        output64 = output.detach().to(value.device, torch.float64)
        passes = passes_tolerance(output64, value, self.atol, self.rtol)
        error = (output64 - value).abs()
        finite_error = torch.isfinite(error)
        finite = error if bool(finite_error.all()) else error[finite_error]
        max_abs = float(finite.max()) if finite.numel() else math.inf
        return passes, max_abs, relative_l2_error(output64, value)

    def _summary(self, references, outputs, constant: float) -> tuple[bool, float, float]:
        """The three figures from ``|c - r|`` (c: the output's chunk, or `constant` where None)."""
        passes, worst, squares = True, 0.0, 0.0
        for reference, output in zip(references, outputs):
            value = reference.to(torch.float64)
            other = constant if output is None else output.to(value.device, torch.float64)
            difference = (value - other).abs_()
            passes = passes and bool((difference <= value.abs() * self.rtol + self.atol).all())
            worst = max(worst, float(difference.max()))
            squares += float(torch.dot(difference, difference))
        return passes, worst, _l2_ratio(math.sqrt(squares), self.norm)


def audit(reference_outputs: Any, atol: float, rtol: float, inputs: Any = None) -> dict[str, Any]:
    """Does a trivial output pass ``atol``/``rtol`` against this reference?

    ``reference_outputs`` is one trial's reference output (a tensor or a nested structure of
    them); ``inputs`` (optional) that trial's forward arguments, for the "input itself" trivial
    output. Only floating-point outputs are audited. Returns::

        {"degenerate": bool,                 # some trivial output passes the tolerance
         "passing": ["zeros", ...],          # which ones
         "exact_trivial": ["zeros", ...],    # trivial outputs that are exactly right (flag the problem)
         "trivial": {name: {"applicable": bool, "passes": bool,
                            "max_abs_error": float | None, "relative_l2_error": float | None}},
         "scale_aware_threshold": float,     # tau for scale_aware_compare
         "atol": atol, "rtol": rtol}
    """
    # fp8 leaves are read as float32 (exactly): fp8 has no arithmetic kernels of its own.
    leaves = [leaf for leaf in tensor_leaves(reference_outputs) if _floating(leaf) and leaf.numel() > 0]
    references = [comparable(leaf) for leaf in leaves]
    input_leaves = [comparable(leaf) for leaf in tensor_leaves(inputs)]
    prepared = [_Reference(leaf, atol, rtol) for leaf in references]  # float64 and its bounds, once each
    trivial: dict[str, dict[str, Any]] = {}
    for name in TRIVIAL_OUTPUTS:
        passes, applicable = True, False
        worst_abs, worst_rel = 0.0, 0.0
        for reference in prepared:
            figures = reference.errors(name, input_leaves)
            if figures is None:
                continue
            applicable = True
            output_passes, max_abs, relative = figures
            passes = passes and output_passes
            worst_abs = max(worst_abs, max_abs)
            worst_rel = max(worst_rel, relative)
        trivial[name] = {
            "applicable": applicable,
            "passes": applicable and passes,
            "max_abs_error": worst_abs if applicable else None,
            "relative_l2_error": worst_rel if applicable else None,
        }
    passing = [name for name, entry in trivial.items() if entry["passes"]]
    errors = [entry["relative_l2_error"] for entry in trivial.values() if entry["applicable"]]
    exact = [name for name, entry in trivial.items() if entry["applicable"] and entry["relative_l2_error"] == 0.0]
    return {
        "degenerate": bool(passing),
        "passing": passing,
        "exact_trivial": exact,
        "trivial": trivial,
        "scale_aware_threshold": scale_aware_threshold(errors, rounding_floor(leaf.dtype for leaf in leaves)),
        "atol": atol,
        "rtol": rtol,
    }


def rounding_floor(dtypes: Iterable[torch.dtype]) -> float:
    """The least threshold the outputs' dtypes allow: ``ROUNDING_ULPS * eps`` of the coarsest real
    floating dtype among them, 0.0 when there is none (complex outputs add no floor)."""
    floors = [0.0]
    for dtype in dtypes:
        if dtype.is_floating_point:
            floors.append(ROUNDING_ULPS * torch.finfo(dtype).eps)
    return max(floors)


def scale_aware_threshold(trivial_errors: Iterable[float], floor: float = 0.0) -> float:
    """``tau = min(0.01, max(0.1 * smallest nonzero trivial error, floor))``; 0.01 when none is known.
    `floor` is :func:`rounding_floor` of the outputs' dtypes."""
    positive = [error for error in trivial_errors if error is not None and error > 0.0]
    if not positive:
        return DEFAULT_RELATIVE_L2_THRESHOLD
    return min(DEFAULT_RELATIVE_L2_THRESHOLD, max(TRIVIAL_MARGIN * min(positive), floor))


def audit_trials(trials: Iterable[tuple[Any, Any]], atol: float, rtol: float) -> dict[str, Any]:
    """:func:`audit` over several ``(reference_outputs, inputs)`` trials: a trivial output counts as
    passing only if it passes in every trial; the threshold is the smallest of the trials'."""
    return combine_audits([audit(outputs, atol, rtol, inputs) for outputs, inputs in trials], atol, rtol)


def combine_audits(audits: Sequence[dict[str, Any]], atol: float, rtol: float) -> dict[str, Any]:
    """The result of :func:`audit_trials` from each trial's :func:`audit` (computed one at a time,
    so that only one trial's reference and inputs need to exist at once)."""
    if not audits:
        raise ValueError("audit_trials needs at least one (reference_outputs, inputs) trial")
    passing = [name for name in TRIVIAL_OUTPUTS if all(name in item["passing"] for item in audits)]
    exact = [name for name in TRIVIAL_OUTPUTS if all(name in item["exact_trivial"] for item in audits)]
    return {
        "degenerate": bool(passing),
        "passing": passing,
        "exact_trivial": exact,
        "trials": audits,
        "scale_aware_threshold": min(item["scale_aware_threshold"] for item in audits),
        "atol": atol,
        "rtol": rtol,
    }
