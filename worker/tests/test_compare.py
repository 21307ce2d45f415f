"""compare.py directly: the tolerance rule, NaN handling, structure, shape and dtype checks."""

import pytest
import torch

from kforge_worker.tolerance.compare import compare_outputs, tensor_errors
from kforge_worker.protocol.outputs import flatten


def compare(reference, candidate, atol=1e-2, rtol=1e-2, fp64=None):
    return compare_outputs(flatten(reference), flatten(candidate), atol, rtol, None if fp64 is None else flatten(fp64))


def test_identical_outputs_pass_with_zero_error():
    x = torch.randn(5, 5)
    outcome = compare(x, x.clone())
    assert outcome["check"] is None and outcome["message"] is None
    assert outcome["max_abs_error"] == 0.0 and outcome["mismatch_count"] == 0 and outcome["numel"] == 25


def test_tolerance_is_atol_plus_rtol_times_reference():
    reference = torch.tensor([0.0, 100.0, -100.0])
    inside = torch.tensor([0.0099, 100.0 + 1.0099, -100.0 - 1.0099], dtype=torch.float64).float()
    assert compare(reference, inside)["check"] is None
    outside = torch.tensor([0.0, 101.02, -100.0])
    outcome = compare(reference, outside)
    assert outcome["check"] == "mismatch" and outcome["mismatch_count"] == 1
    assert "index (1,)" in outcome["message"]
    assert outcome["max_abs_error"] == pytest.approx(1.02, rel=1e-5)
    assert outcome["max_rel_error"] == pytest.approx(0.0102, rel=1e-4)


def test_nan_or_inf_where_the_reference_is_finite_is_a_nan_check():
    reference = torch.ones(2, 3)
    candidate = reference.clone()
    candidate[1, 2] = float("inf")
    outcome = compare(reference, candidate)
    assert outcome["check"] == "nan" and outcome["mismatch_count"] == 1
    assert "index (1, 2)" in outcome["message"]
    assert outcome["max_abs_error"] == 0.0


def test_matching_non_finite_reference_values_pass():
    reference = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0])
    assert compare(reference, reference.clone())["check"] is None
    wrong = torch.tensor([1.0, float("inf"), float("inf"), 1.0])
    outcome = compare(reference, wrong)
    assert outcome["check"] == "mismatch" and outcome["mismatch_count"] == 2


def test_relative_error_skips_zero_reference_elements():
    assert tensor_errors(torch.tensor([0.0, 2.0]), torch.tensor([0.5, 2.2])) == pytest.approx((0.5, 0.1))


def test_shape_dtype_and_structure_checks():
    x = torch.randn(4, 4)
    assert compare(x, x.reshape(16))["check"] == "shape"
    shape = compare(x, x.reshape(16))
    assert shape["max_abs_error"] is None and shape["mismatch_count"] is None
    dtype = compare(x, x.double())
    assert dtype["check"] == "dtype" and dtype["max_abs_error"] == 0.0
    assert compare(x, (x,))["check"] == "structure"
    assert compare((x, 3), (x, x))["check"] == "structure"
    assert compare([x, None], [x, 0])["check"] == "structure"


def test_strongest_check_wins_across_leaves():
    a, b = torch.zeros(3), torch.zeros(2)
    bad_a = a + 1
    outcome = compare((a, b), (bad_a, b.reshape(1, 2)))
    assert outcome["check"] == "shape"
    assert "output leaf 1" in outcome["message"]


def test_non_tensor_leaves_compare_numbers_within_tolerance_and_others_exactly():
    x = torch.zeros(2)
    assert compare((x, 3, 1.0), (x, 3.0, 1.001))["check"] is None
    outcome = compare((x, 3), (x, 4))
    assert outcome["check"] == "mismatch" and "is 4, the reference's is 3" in outcome["message"]
    assert compare((x, "a"), (x, "b"))["check"] == "mismatch"
    assert compare((x, True), (x, 1))["check"] == "structure"


def test_error_against_the_float64_reference_is_reported():
    exact = torch.tensor([1.0, 2.0], dtype=torch.float64)
    run = exact.float()
    candidate = torch.tensor([1.0, 2.5])
    outcome = compare(run, candidate, fp64=exact)
    assert outcome["fp64_max_abs_error"] == pytest.approx(0.5)
    assert outcome["fp64_max_rel_error"] == pytest.approx(0.25)
    assert compare(run, candidate)["fp64_max_abs_error"] is None


def test_tensor_subclass_output_is_a_structure_failure():
    class Deferred(torch.Tensor):
        pass

    x = torch.ones(3)
    outcome = compare(x, x.clone().as_subclass(Deferred))
    assert outcome["check"] == "structure" and "Deferred" in outcome["message"]


def test_the_first_mismatch_carries_its_index_and_both_values():
    reference = torch.zeros(2, 3)
    candidate = reference.clone()
    candidate[1, 0] = 0.5
    candidate[1, 2] = 2.0
    first = compare(reference, candidate)["first_mismatch"]
    assert first == {"index": [1, 0], "expected": 0.0, "actual": 0.5, "leaf": None}
    assert compare(reference, reference.clone())["first_mismatch"] is None


def test_a_non_finite_first_mismatch_is_named_in_text_and_the_leaf_is_given_among_several():
    reference = torch.ones(4)
    candidate = reference.clone()
    candidate[2] = float("nan")
    outcome = compare((reference, reference), (reference.clone(), candidate))
    assert outcome["check"] == "nan"
    assert outcome["first_mismatch"] == {"index": [2], "expected": 1.0, "actual": "nan", "leaf": 1}
