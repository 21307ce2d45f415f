"""The run-time half of `torch-fallback`, in process: the operator classifier (dispatch_ops.py), the
dispatch trace (dispatch_trace.py) and its judgement (torch_fallback.py).

End to end (both worker processes) the check is exercised by the adversarial corpus
(test_adversarial.py: c06c, c06d, h06d and every honest case under the default policy) and by
test_guard_dynamic.py (pytorch: a note).
"""

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode, _pop_mode

from kforge_worker.guard.dispatch_ops import COMPUTE, GLUE, GLUE_ATEN, OWN, classify, glue_operators, operator_name
from kforge_worker.guard.dispatch_trace import _depth, record_dispatch, traced_call
from kforge_worker.guard.policy import POLICY_NAMES, load_policy
from kforge_worker.guard.static import COMPUTE_FUNCTIONS
from kforge_worker.guard.torch_fallback import SMALL_OP_ELEMENTS, judge, severity

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "adversarial"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
DEFAULT_GLUE = glue_operators(load_policy("own-kernels"))


# --- the classifier ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "aten::mm",
        "aten::addmm",
        "aten::bmm",
        "aten::matmul",
        "aten::convolution",
        "aten::_softmax",
        "aten::gelu",
        "aten::relu",
        "aten::add.Tensor",
        "aten::mul.Scalar",
        "aten::sum.dim_IntList",
        "aten::mean.dim",
        "aten::native_layer_norm",
        "aten::exp",
        "aten::where.self",
        "aten::clamp_min",
        "aten::cat",
        "aten::stack",
        "aten::randn",
        "aten::normal_",
        "prims::mul",
        "torchvision::nms",
    ],
)
@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_compute_operators_are_compute_under_every_shipped_policy(name, policy):
    assert classify(name, glue_operators(load_policy(policy))) == COMPUTE


@pytest.mark.parametrize(
    "name",
    [
        "aten::empty.memory_format",
        "aten::empty_like",
        "aten::empty_strided",
        "aten::zeros",
        "aten::zeros_like",
        "aten::ones_like",
        "aten::full",
        "aten::arange.start_step",
        "aten::fill_.Scalar",
        "aten::fill_.Tensor",
        "aten::zero_",
        "aten::view",
        "aten::_unsafe_view",
        "aten::_reshape_alias",
        "aten::reshape",
        "aten::as_strided",
        "aten::expand",
        "aten::squeeze.dim",
        "aten::unsqueeze",
        "aten::permute",
        "aten::transpose.int",
        "aten::t",
        "aten::contiguous",
        "aten::clone",
        "aten::copy_",
        "aten::_to_copy",
        "aten::select.int",
        "aten::slice.Tensor",
        "aten::split.Tensor",
        "aten::split_with_sizes",
        "aten::chunk",
        "aten::narrow",
        "aten::unbind.int",
        "aten::detach",
        "aten::alias",
        "aten::lift_fresh",
        "aten::_local_scalar_dense",
        "aten::index.Tensor",
        "aten::index_put_",
        "aten::record_stream",
        "aten::sym_size.int",
        "aten::resize_",
    ],
)
@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_shape_view_copy_and_allocation_operators_are_glue(name, policy):
    assert classify(name, glue_operators(load_policy(policy))) == GLUE


def test_operators_of_other_namespaces_are_the_candidates_own():
    assert classify("kforge_candidate::relu", DEFAULT_GLUE) == OWN
    assert classify("mylib::fused_gemm.out", DEFAULT_GLUE) == OWN


def test_a_policy_that_allows_cat_makes_aten_cat_glue():
    policy = load_policy(
        {
            "base": "own-kernels",
            "name": "with-cat",
            "glue_torch_functions": load_policy()["glue_torch_functions"] + ["cat"],
        }
    )
    assert classify("aten::cat", glue_operators(policy)) == GLUE
    assert classify("aten::cat", DEFAULT_GLUE) == COMPUTE


def test_every_glue_name_of_the_policy_has_its_aten_operators():
    policy = load_policy()
    for name in policy["glue_torch_functions"] + policy["glue_tensor_methods"]:
        for operator in GLUE_ATEN.get(name, (name,)):
            assert classify(f"aten::{operator}", DEFAULT_GLUE) == GLUE, (name, operator)


def test_dynamic_glue_agrees_with_the_static_compute_list():
    # Only the writes behind `x[mask] = v` (allowed statically through __setitem__) are operators the
    # static guard calls compute when they are spelled out.
    assert sorted(DEFAULT_GLUE & COMPUTE_FUNCTIONS) == ["index_put_", "masked_fill_"]


def test_operator_names_come_from_the_schema():
    assert operator_name(torch.ops.aten.add.Tensor) == "aten::add.Tensor"
    assert operator_name(torch.ops.aten.mm.default) == "aten::mm"
    assert operator_name(torch.ops.aten.sum.dim_IntList) == "aten::sum.dim_IntList"


# --- the trace --------------------------------------------------------------------------------


def _glue_only(x):
    flat = x.contiguous().view(-1)
    out = torch.empty_like(flat)
    target = out.numpy()
    for index, value in enumerate(flat.tolist()):
        target[index] = value if value > 0.0 else 0.0
    return out.view(x.size(0), x.size(1)).t().contiguous().t()


def _names(recorder):
    return {entry.name: (entry.kind, entry.count) for entry in recorder.counts()}


def test_glue_only_code_dispatches_only_glue_and_its_result_is_unchanged():
    x = torch.randn(8, 64)
    with torch.no_grad():
        traced, recorder = traced_call(lambda: _glue_only(x), DEFAULT_GLUE)
    assert torch.equal(traced, _glue_only(x)) and torch.equal(traced, torch.relu(x))
    assert all(entry.kind == GLUE for entry in recorder.counts()), _names(recorder)
    assert "aten::empty_like" in _names(recorder) and recorder.tampered is None and recorder.errors == 0
    assert _depth() == 0


def test_compute_is_counted_with_its_largest_tensor():
    x, w = torch.randn(8, 64), torch.randn(64, 32)
    with torch.no_grad():
        out, recorder = traced_call(lambda: torch.relu(x @ w + 1.0), DEFAULT_GLUE)
    assert torch.equal(out, torch.relu(x @ w + 1.0))
    counts = {entry.name: entry for entry in recorder.counts()}
    assert {name for name, entry in counts.items() if entry.kind == COMPUTE} == {
        "aten::mm",
        "aten::add.Tensor",
        "aten::relu",
    }
    assert counts["aten::mm"].count == 1 and counts["aten::mm"].largest == 64 * 32
    assert counts["aten::relu"].result_elements == 8 * 32


def test_the_mode_is_removed_when_forward_raises():
    x = torch.randn(4)

    def raises():
        torch.relu(x)
        raise ValueError("the candidate's own error")

    with pytest.raises(ValueError, match="own error"):
        traced_call(raises, DEFAULT_GLUE)
    assert _depth() == 0
    with record_dispatch(DEFAULT_GLUE) as recorder:
        pass
    torch.relu(x)  # after the trace: not recorded
    assert recorder.counts() == []


class _Passthrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_a_candidate_that_pops_the_trace_is_found():
    x = torch.randn(4)

    def pops():
        _pop_mode()
        return torch.relu(x)

    _, recorder = traced_call(pops, DEFAULT_GLUE)
    assert "removed from torch's dispatch-mode stack" in recorder.tampered
    assert recorder.counts() == [] and _depth() == 0


def test_a_mode_left_on_top_of_the_trace_is_found_and_removed():
    _, recorder = traced_call(lambda: _Passthrough().__enter__(), DEFAULT_GLUE)
    assert "_Passthrough pushed above the worker's trace" in recorder.tampered and _depth() == 0


def test_a_mode_of_the_candidates_own_that_it_removes_again_is_fine():
    x = torch.randn(4)

    def balanced():
        with _Passthrough():
            return torch.relu(x)

    out, recorder = traced_call(balanced, DEFAULT_GLUE)
    assert recorder.tampered is None and torch.equal(out, torch.relu(x))
    assert _names(recorder)["aten::relu"] == (COMPUTE, 1)


# --- the judgement ----------------------------------------------------------------------------


def _entry(name, kind=COMPUTE, count=1, largest=4096, result_elements=4096):
    return SimpleNamespace(name=name, kind=kind, count=count, largest=largest, result_elements=result_elements)


def test_the_message_names_each_operator_and_its_count():
    found = judge(
        [_entry("aten::mm"), _entry("aten::add.Tensor"), _entry("aten::empty_like", GLUE, 2)],
        load_policy("own-kernels"),
        4096,
        "correctness trial 0 (seed 11)",
    )
    assert found.status == "reject" and found.compute == ["aten::mm", "aten::add.Tensor"]
    assert found.message == (
        "correctness trial 0 (seed 11): forward dispatched aten::mm ×1, aten::add.Tensor ×1 to "
        "PyTorch while it ran: the policy `own-kernels` allows only shape, view and allocation glue; "
        "move the work into the kernel"
    )


@pytest.mark.parametrize(
    "policy, level",
    [
        ("own-kernels", "reject"),
        ("strict", "reject"),
        ("kernelbench", "note"),
        ("permissive", "note"),
        ("pytorch", "note"),
        ({"base": "own-kernels", "name": "lenient", "severity": {"torch-fallback": "note"}}, "note"),
        ({"base": "own-kernels", "name": "aten-ok", "aten_compute_in_native": True}, "note"),
        ({"base": "own-kernels", "name": "any", "forward_torch": "any"}, "note"),
    ],
)
def test_the_policy_decides_between_rejection_and_a_note(policy, level):
    loaded = load_policy(policy)
    assert severity(loaded) == level
    found = judge([_entry("aten::relu")], loaded, 4096, "trial")
    assert found.status == level and "aten::relu ×1" in found.message


def test_small_compute_within_the_budget_is_bookkeeping():
    small = _entry("aten::add.Tensor", count=3, largest=SMALL_OP_ELEMENTS, result_elements=3)
    found = judge([small, _entry("aten::empty_like", GLUE)], load_policy(), 512, "trial")
    assert found.status == "passed" and "bookkeeping (aten::add.Tensor ×3" in found.message


def test_small_compute_past_the_budget_is_compute():
    # relu element by element: 512 one-element calls for a 512-element output.
    found = judge(
        [_entry("aten::relu", count=512, largest=1, result_elements=512)], load_policy("own-kernels"), 512, "trial"
    )
    assert found.status == "reject" and "aten::relu ×512" in found.message


def test_one_large_call_is_compute_however_small_the_others():
    operators = [_entry("aten::add.Tensor", largest=1, result_elements=1), _entry("aten::mul.Tensor", largest=65)]
    found = judge(operators, load_policy("own-kernels"), 1 << 20, "trial")
    assert found.status == "reject" and found.compute == ["aten::mul.Tensor"]


def test_own_operators_are_listed_not_judged():
    found = judge([_entry("mylib::relu", OWN)], load_policy(), 512, "trial")
    assert found.status == "passed" and "its own operator(s) mylib::relu ×1" in found.message


# --- the corpus, in process: honest Python look-alikes pass, the Python cheat does not ------------


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# c06e works in a helper thread, out of the (thread-local) trace's sight: the profiler's all-threads
# record catches it (test_own_kernel.py, adversarial[cpu/c06e…]).
PYTHON_CASES = [
    case
    for case in MANIFEST["cases"]
    if case["backend"] == "cpu"
    and not case["native"]
    and (case["kind"] == "honest" or case["expected_check"] == "torch-fallback")
    and "needs" not in case
]


@pytest.mark.parametrize("case", PYTHON_CASES, ids=[case["file"] for case in PYTHON_CASES])
def test_corpus_forward_under_the_trace(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    problem = _load(CORPUS / case["problem"], "trace_problem")
    candidate = _load(CORPUS / case["file"], "trace_candidate")
    torch.manual_seed(11)
    inputs = problem.get_inputs()
    model = candidate.ModelNew(*problem.get_init_inputs())
    with torch.no_grad():
        output, recorder = traced_call(lambda: model(*inputs), DEFAULT_GLUE)
    found = judge(recorder.counts(), load_policy("own-kernels"), output.numel(), "trial")
    expected = "reject" if case["kind"] == "cheat" else "passed"
    assert found.status == expected, found.message
    assert torch.allclose(output, problem.Model(*problem.get_init_inputs())(*inputs), atol=1e-5, rtol=1e-5)
