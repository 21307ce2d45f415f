"""Tests of kforge_worker.tolerance.degenerate: trivial outputs against a tolerance, and the scale-aware metric."""

from __future__ import annotations

import math

import pytest
import torch

from kforge_worker.tolerance.degenerate import audit, audit_trials, passes_tolerance, scale_aware_threshold
from kforge_worker.tolerance.relative_l2 import DEFAULT_RELATIVE_L2_THRESHOLD, relative_l2_error, scale_aware_compare


def wide_softmax(seed: int = 0, rows: int = 4, cols: int = 8192):
    generator = torch.Generator().manual_seed(seed)
    logits = torch.randn(rows, cols, generator=generator)
    return logits, torch.softmax(logits, dim=1)


def test_zeros_pass_atol_1e2_on_a_wide_softmax():
    logits, reference = wide_softmax()
    assert passes_tolerance(torch.zeros_like(reference), reference, atol=1e-2, rtol=1e-2)
    result = audit(reference, atol=1e-2, rtol=1e-2, inputs=[logits])
    assert result["degenerate"] is True
    assert "zeros" in result["passing"] and "mean" in result["passing"]
    assert "ones" not in result["passing"] and "input" not in result["passing"]
    assert result["trivial"]["zeros"]["relative_l2_error"] == pytest.approx(1.0)
    assert result["exact_trivial"] == []


def test_scale_aware_metric_rejects_trivial_outputs_and_accepts_correct_ones():
    logits, reference = wide_softmax()
    threshold = audit(reference, 1e-2, 1e-2, [logits])["scale_aware_threshold"]
    assert threshold == DEFAULT_RELATIVE_L2_THRESHOLD
    zeros = scale_aware_compare(torch.zeros_like(reference), reference, threshold)
    assert zeros["passed"] is False and zeros["relative_l2_error"] == pytest.approx(1.0)
    assert "exceeds" in zeros["message"]
    mean = scale_aware_compare(torch.full_like(reference, 1.0 / reference.shape[1]), reference, threshold)
    assert mean["passed"] is False
    assert scale_aware_compare(torch.softmax(logits.double(), dim=1).float(), reference, threshold)["passed"]
    half = scale_aware_compare(torch.softmax(logits.half().float(), dim=1), reference, threshold)
    assert half["passed"] is True and 0 < half["relative_l2_error"] < threshold


def test_constant_mean_error_follows_the_documented_formula():
    _, reference = wide_softmax(seed=3)
    r = reference.double()
    sigma, mu = float(r.std(unbiased=False)), float(r.mean())
    error = relative_l2_error(torch.full_like(reference, mu), reference)
    assert error == pytest.approx(sigma / math.sqrt(sigma**2 + mu**2), rel=1e-6)


def test_a_well_scaled_problem_is_not_degenerate():
    logits = torch.randn(8, 64, generator=torch.Generator().manual_seed(1))
    result = audit(torch.relu(logits), atol=1e-2, rtol=1e-2, inputs=[logits])
    assert result["degenerate"] is False and result["passing"] == []
    assert result["trivial"]["input"]["applicable"] is True


def test_an_exactly_trivial_reference_flags_the_problem():
    logits = torch.rand(8, 64) + 0.5  # relu of positive inputs is the input itself
    result = audit(torch.relu(logits), atol=1e-4, rtol=1e-4, inputs=[logits])
    assert result["exact_trivial"] == ["input"] and result["passing"] == ["input"]


def test_threshold_shrinks_for_a_nearly_constant_reference():
    reference = torch.full((1000,), 5.0) + 1e-3 * torch.randn(1000, generator=torch.Generator().manual_seed(2))
    result = audit(reference, atol=1e-2, rtol=1e-2)
    mean_error = result["trivial"]["mean"]["relative_l2_error"]
    assert result["scale_aware_threshold"] == pytest.approx(0.1 * mean_error)
    assert (
        scale_aware_compare(
            torch.full_like(reference, float(reference.mean())), reference, result["scale_aware_threshold"]
        )["passed"]
        is False
    )
    assert scale_aware_threshold([]) == DEFAULT_RELATIVE_L2_THRESHOLD


def test_nan_shape_and_structure_mismatches_fail():
    _, reference = wide_softmax()
    broken = reference.clone()
    broken[0, 0] = float("nan")
    assert scale_aware_compare(broken, reference)["passed"] is False
    assert not passes_tolerance(broken, reference, 1e-2, 1e-2)
    assert scale_aware_compare(reference[:2], reference)["passed"] is False
    assert scale_aware_compare((reference, reference), reference)["passed"] is False
    paired = scale_aware_compare((reference, torch.tensor([1, 2])), (reference, torch.tensor([1, 2])))
    assert paired["passed"] is True and len(paired["leaves"]) == 2


def test_audit_trials_needs_every_trial_to_pass():
    trials = [(wide_softmax(seed)[1], [wide_softmax(seed)[0]]) for seed in (0, 1)]
    combined = audit_trials(trials, 1e-2, 1e-2)
    assert combined["degenerate"] is True and "zeros" in combined["passing"]
    mixed = audit_trials(trials + [(torch.ones(4, 4), None)], 1e-2, 1e-2)
    assert "zeros" not in mixed["passing"]
    with pytest.raises(ValueError):
        audit_trials([], 1e-2, 1e-2)


@pytest.mark.parametrize("special", [None, math.inf, math.nan])
def test_audit_figures_follow_their_definitions_on_finite_and_special_references(special):
    # The audit computes |r| and atol + rtol·|r| once per reference; its figures must be those of
    # passes_tolerance, the max abs error and relative_l2_error applied to each trivial output.
    generator = torch.Generator().manual_seed(7)
    reference = torch.randn(64, 96, generator=generator) * 0.002
    inputs = [torch.randn(64, 96, generator=generator) * 0.02]
    if special is not None:
        reference[3, 5] = special
    result = audit(reference, 1e-2, 1e-2, inputs)
    finite = reference.double()[torch.isfinite(reference.double())]
    mean = float(torch.tensor(float(finite.mean()), dtype=reference.dtype))
    expected_outputs = {
        "zeros": torch.zeros_like(reference),
        "mean": torch.full_like(reference, mean),
        "ones": torch.ones_like(reference),
        "input": inputs[0],
    }
    for name, output in expected_outputs.items():
        figures = result["trivial"][name]
        error = (output.double() - reference.double()).abs()
        finite_error = error[torch.isfinite(error)]
        assert figures["passes"] == passes_tolerance(output, reference, 1e-2, 1e-2), name
        assert figures["max_abs_error"] == pytest.approx(float(finite_error.max()), rel=1e-12), name
        expected_l2 = relative_l2_error(output, reference)
        assert figures["relative_l2_error"] == (
            pytest.approx(expected_l2, rel=1e-12) if math.isfinite(expected_l2) else expected_l2
        ), name
    # zeros and the constant mean pass this small-scale reference only where it is finite
    assert result["trivial"]["zeros"]["passes"] is (special is None)
