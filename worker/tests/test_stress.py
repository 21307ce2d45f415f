"""The stressed correctness trial (problem/stress.py, docs/hacks.md #20, #21): which seed, how its
inputs are made, its reference, how the judge names a failure there; and the scale-aware
threshold's floor at the output dtype's rounding (tolerance/degenerate.py)."""

import types

import torch

from kforge_worker.problem.problem_loader import load_problem
from kforge_worker.problem.stress import STRESS_SCALE, STRESS_SHIFT, stress_inputs, stressed_seed
from kforge_worker.protocol.outputs import flatten
from kforge_worker.protocol.request import JudgedOutput
from kforge_worker.roles.reference_store import ReferenceStore
from kforge_worker.tolerance.degenerate import audit, rounding_floor, scale_aware_threshold
from kforge_worker.tolerance.judge import STRESSED_RELATIVE_L2, ReferenceRecord, judge_trial

CPU = torch.device("cpu")

LAYER_NORM = """
import torch
import torch.nn as nn

rows = 2
width = 131072


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(rows, width)]


def get_init_inputs():
    return []
"""


def _problem(tmp_path, source: str):
    path = tmp_path / "problem.py"
    path.write_text(source)
    return load_problem(str(path), None)


def test_floating_inputs_are_scaled_and_shifted_and_the_rest_untouched():
    x = torch.randn(3, 4)
    tril = torch.tril(torch.randn(4, 4))
    indices = torch.tensor([0, 2, 1])
    mask = torch.tensor([True, False])
    stressed = stress_inputs([x, tril, indices, mask, 7, [x]])
    assert torch.equal(stressed[0], x * STRESS_SCALE + STRESS_SHIFT)
    assert torch.equal(stressed[1], tril * STRESS_SCALE), "a tensor holding zeros keeps them"
    assert stressed[2] is indices and stressed[3] is mask and stressed[4] == 7
    assert torch.equal(stressed[5][0], stressed[0])
    assert torch.equal(x, x.clone()) and stressed[0] is not x


def test_the_stressed_seed_is_the_last_of_two_or_more_distinct_ones():
    plain = types.SimpleNamespace()
    assert stressed_seed(plain, [11, 12, 13], [21]) == 13
    assert stressed_seed(plain, [11]) is None
    assert stressed_seed(plain, [11, 11]) is None
    assert stressed_seed(plain, [11, 12], [12]) is None
    assert stressed_seed(types.SimpleNamespace(KFORGE_STRESS_INPUTS=False), [11, 12]) is None


def test_the_stressed_record_is_the_reference_on_stressed_inputs_and_its_twin_too(tmp_path):
    problem = _problem(tmp_path, LAYER_NORM)
    store = ReferenceStore(problem, CPU, None, stressed_seed=12)
    plain, stressed = store.compute(11), store.compute(12)
    assert not plain.stressed and stressed.stressed
    torch.manual_seed(12)
    x = torch.randn(2, 131072) * STRESS_SCALE + STRESS_SHIFT
    expected = torch.nn.functional.layer_norm(x, (131072,))
    assert torch.allclose(stressed.output.leaves[0], expected, atol=1e-5)
    assert torch.allclose(stressed.output_fp64.leaves[0].float(), expected, atol=1e-4)
    assert not store.is_stressed(12, 99, None) and not store.is_stressed(12, None, {"rows": 4})


def _judged(record: ReferenceRecord, candidate) -> dict:
    entry = JudgedOutput(seed=record.seed, id="correctness-1", input_digest=record.input_digest)
    return judge_trial(record, entry, flatten(candidate), 1e-2, 1e-2)


def test_a_copy_of_the_input_fails_the_stressed_trial_as_stressed_input(tmp_path):
    problem = _problem(tmp_path, LAYER_NORM)
    store = ReferenceStore(problem, CPU, None, stressed_seed=12)
    torch.manual_seed(12)
    copy = torch.randn(2, 131072) * STRESS_SCALE + STRESS_SHIFT
    trial = _judged(store.compute(12), copy)
    assert trial["check"] == "stressed-input" and not trial["passed"]
    assert "stressed trial" in trial["message"] and "scaled by 10" in trial["message"]
    honest = _judged(store.compute(12), torch.nn.functional.layer_norm(copy, (131072,)))
    assert honest["passed"] and honest["check"] is None
    plain = store.compute(11)
    torch.manual_seed(11)
    assert _judged(plain, torch.randn(2, 131072))["check"] is None, "the copy passes a plain trial's tolerance"


def test_amplified_rounding_passes_the_stressed_trial_and_a_wrong_path_does_not():
    """Softmax of inputs scaled by ten, computed through bfloat16: outside 1e-2 elementwise, within
    a few percent in relative L2 (rounding the scaled inputs amplify), so it passes, saying why; under
    a tolerance of 1e-4 the bound is 1e-3, and it does not. Half
    the elements copied from a neighbour (an inexact path) is far outside and `stressed-input`."""
    torch.manual_seed(3)
    inputs = torch.randn(4, 512) * STRESS_SCALE + STRESS_SHIFT
    reference = torch.softmax(inputs, dim=-1)
    record = ReferenceRecord(seed=12, input_digest="d", output=flatten(reference), output_fp64=None, stressed=True)
    rounded = torch.softmax(inputs.bfloat16().float(), dim=-1)
    assert not torch.allclose(rounded, reference, atol=1e-2, rtol=1e-2), "the case must leave the tolerance"
    trial = _judged(record, rounded)
    assert trial["passed"] and trial["check"] is None, trial
    assert "rounding that the scaled inputs amplify" in trial["message"]
    assert 0 < trial["scale_aware"]["relative_l2_error"] <= STRESSED_RELATIVE_L2
    entry = JudgedOutput(seed=12, id="correctness-1", input_digest="d")
    strict = judge_trial(record, entry, flatten(rounded), 1e-4, 1e-4)
    assert strict["check"] == "stressed-input", "the bound is ten times the tolerance: 1e-3 here"
    halved = reference.clone()
    halved[:, 1::2] = reference[:, 0::2]
    wrong = _judged(record, halved)
    assert wrong["check"] == "stressed-input" and "relative L2 error" in wrong["message"]


def test_a_stressed_trial_whose_reference_is_not_finite_is_not_judged():
    output = flatten(torch.tensor([1.0, float("inf")]))
    record = ReferenceRecord(seed=12, input_digest="d", output=output, output_fp64=None, stressed=True)
    trial = _judged(record, torch.zeros(2))
    assert trial["passed"] and trial["check"] is None and "not judged" in trial["message"]


def test_the_scale_aware_threshold_stays_above_the_output_dtypes_rounding():
    assert rounding_floor([torch.bfloat16]) > 1e-2 > rounding_floor([torch.float16]) > rounding_floor([torch.float32])
    assert rounding_floor([torch.int64, torch.complex64]) == 0.0
    assert scale_aware_threshold([1e-3], rounding_floor([torch.float32])) == 1e-4
    assert scale_aware_threshold([1e-3], rounding_floor([torch.bfloat16])) == 1e-2
    torch.manual_seed(0)
    x = torch.randn(2, 131072)
    thresholds = {}
    for dtype in (torch.float32, torch.bfloat16):
        inputs = x.to(dtype)
        found = audit(torch.nn.functional.layer_norm(inputs, (131072,)), 1e-2, 1e-2, [inputs])
        assert found["passing"] == ["input"], "the input passes the tolerance of a wide LayerNorm"
        thresholds[dtype] = found["scale_aware_threshold"]
    assert thresholds[torch.float32] < 1e-3, "float32: a tenth of the input's error"
    assert thresholds[torch.bfloat16] == 1e-2, "bfloat16: never below its own rounding"
