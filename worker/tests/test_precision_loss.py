"""The precision checks judge the measured error profile, never the casts in the source (issue 41).

A candidate that computes below the run precision passes when its output stays within the
tolerance; one that fails the tolerance is `incorrect` with check `precision-loss` when its error
against the float64 twin is of the size narrower arithmetic gives, and `mismatch` when it is a
wrong answer (tolerance/precision_loss.py). The static guard's `precision` findings are notes.
"""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from kforge_worker.guard.static import analyze, rejections
from kforge_worker.protocol.outputs import flatten
from kforge_worker.protocol.request import JudgedOutput
from kforge_worker.tolerance.judge import ReferenceRecord, judge_trial
from verdicts import verdict
from worker_process import PYTORCH, evaluate

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "adversarial"
LINEAR_GELU = CORPUS / "problems" / "linear_gelu.py"
STRICT, LOOSE = 1e-4, 1e-2


def _judged(candidate: torch.Tensor, reference: torch.Tensor, twin, tolerance: float) -> dict:
    record = ReferenceRecord(7, "digest", flatten(reference), None if twin is None else flatten(twin), "float64")
    entry = JudgedOutput(seed=7, id="correctness-0", input_digest="digest")
    return judge_trial(record, entry, flatten(candidate), tolerance, tolerance)


def _products(dtype: torch.dtype):
    """(run-precision reference, float64 twin, the product with inputs and output in `dtype`) of one
    matmul (accumulated in float32: torch 1.13 has no float16 matmul on the cpu)."""
    generator = torch.Generator().manual_seed(3)
    a, b = torch.randn(64, 256, generator=generator) / 16, torch.randn(256, 48, generator=generator)
    narrow = (a.to(dtype).float() @ b.to(dtype).float()).to(dtype).float()
    return a @ b, a.double() @ b.double(), narrow


@pytest.mark.parametrize("dtype, named", [(torch.bfloat16, "bfloat16"), (torch.float16, "float16")])
def test_a_product_in_narrower_arithmetic_fails_a_tight_tolerance_as_precision_loss(dtype, named):
    reference, twin, candidate = _products(dtype)
    trial = _judged(candidate, reference, twin, STRICT)
    assert trial["passed"] is False and trial["check"] == "precision-loss", trial
    assert f"of the size {named} arithmetic gives" in trial["message"]
    assert "elements differ by more than atol 0.0001" in trial["message"], "the mismatch's figures stay"


def test_the_same_product_passes_a_tolerance_that_allows_it():
    reference, twin, candidate = _products(torch.bfloat16)
    trial = _judged(candidate, reference, twin, LOOSE)
    assert trial["passed"] is True and trial["check"] is None
    assert trial["fp64_max_abs_error"] > 1e-3, "the error against float64 is still reported"


@pytest.mark.parametrize(
    "wrong",
    [
        lambda product: product.flip(0),
        lambda product: product + 0.5,
        lambda product: product + 2e-3,
        lambda product: product + torch.linspace(0, 4e-3, product.shape[1]),
        lambda product: product.clone().index_fill_(1, torch.tensor([3]), 0.0),
    ],
    ids=["rows-swapped", "offset", "offset-as-small-as-bfloat16-rounding", "small-bias-per-column", "one-column-zero"],
)
def test_a_wrong_answer_stays_a_mismatch(wrong):
    reference, twin, _ = _products(torch.bfloat16)
    trial = _judged(wrong(reference), reference, twin, STRICT)
    assert trial["check"] == "mismatch", trial


def test_without_a_twin_or_with_integer_leaves_a_failure_stays_a_mismatch():
    reference, twin, candidate = _products(torch.bfloat16)
    assert _judged(candidate, reference, None, STRICT)["check"] == "mismatch"
    index = torch.arange(4)
    pair = _judged((candidate, index), (reference, index), (twin, index), STRICT)
    assert pair["check"] == "mismatch", "rounding does not explain an integer leaf"


def test_a_candidate_no_farther_from_float64_than_the_reference_is_not_precision_loss():
    """A tolerance tighter than the run precision's own error fails an exact candidate: mismatch."""
    reference, twin, _ = _products(torch.bfloat16)
    half_reference = reference.half().float()
    trial = _judged(twin.float(), half_reference, twin, 1e-6)
    assert trial["check"] == "mismatch", trial


BF16_LINEAR_GELU = """
import torch
import torch.nn.functional as F


class ModelNew(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = torch.nn.Linear(in_features, out_features)

    def forward(self, x):
        weight, bias = self.linear.weight.bfloat16(), self.linear.bias.bfloat16()
        return F.gelu(F.linear(x.to(torch.bfloat16), weight, bias)).to(torch.float32)
"""

#: The same module with a wrong forward: ReLU where the reference has GELU, in float32.
WRONG_LINEAR_GELU = (
    BF16_LINEAR_GELU[: BF16_LINEAR_GELU.index("        weight, bias")] + "        return F.relu(self.linear(x))\n"
)


def test_the_static_guard_notes_casts_and_autocast_and_rejects_none():
    autocast = BF16_LINEAR_GELU.replace("return F.gelu(", "with torch.autocast('cpu'):\n            return F.gelu(")
    for source in (BF16_LINEAR_GELU, autocast):
        findings = analyze(source, "own-kernels", precision="fp32")
        assert rejections(findings) == []
        notes = [finding for finding in findings if finding["check"] == "precision"]
        assert notes and all("judged by the measured error" in note["message"] for note in notes), findings


@pytest.fixture(scope="module")
def runs(tmp_path_factory, build_dir):
    root = tmp_path_factory.mktemp("precision-loss")
    cases = {
        "bf16-loose": (BF16_LINEAR_GELU, LOOSE),
        "bf16-strict": (BF16_LINEAR_GELU, STRICT),
        "wrong-strict": (WRONG_LINEAR_GELU, STRICT),
    }
    jobs = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for name, (source, tolerance) in cases.items():
            path = root / f"{name}.py"
            path.write_text(source)
            jobs[name] = pool.submit(
                evaluate, LINEAR_GELU, path, root / name, build_dir, atol=tolerance, rtol=tolerance, guard=PYTORCH
            )
        return {name: job.result() for name, job in jobs.items()}


def test_bfloat16_arithmetic_in_an_fp32_run_is_correct_within_the_kernelbench_tolerance(runs):
    result = runs["bf16-loose"]
    assert verdict(result) == ("correct", None), result.judgement
    assert all(trial["fp64_max_abs_error"] > 1e-3 for trial in result.judgement["trials"])


def test_bfloat16_arithmetic_beyond_a_strict_tolerance_is_incorrect_as_precision_loss(runs):
    result = runs["bf16-strict"]
    assert verdict(result) == ("incorrect", "precision-loss"), result.judgement
    assert "of the size bfloat16 arithmetic gives" in result.judgement["trials"][0]["message"]


def test_a_wrong_kernel_beyond_the_same_tolerance_is_a_mismatch(runs):
    assert verdict(runs["wrong-strict"]) == ("incorrect", "mismatch")
