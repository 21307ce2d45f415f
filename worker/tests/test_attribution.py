"""attribution.cpu and .device: where the time of a traced call went, and which operators did work."""

from types import SimpleNamespace

from kforge_worker.guard import attribution
from kforge_worker.guard import torch_fallback
from kforge_worker.guard.dispatch_ops import COMPUTE, GLUE
from kforge_worker.guard.dispatch_trace import OperatorCount


def _operator(name: str, elapsed_ms: float) -> OperatorCount:
    return OperatorCount(name=name, kind=COMPUTE, count=1, elapsed_ns=int(elapsed_ms * 1e6))


def test_a_candidate_without_native_code_has_no_own_time():
    operators = [_operator("aten::mul", 0.04), _operator("aten::add", 0.03)]
    result = attribution.cpu(operators, None, wall_ns=int(0.40e6), dispatch_ns=int(0.07e6), extension_dispatch_ns=0)
    message = result.message()
    assert message["own_share"] == 0.0
    assert message["by_origin_ms"] == {"own": 0.0, "library": 0.0, "torch": 0.07}
    assert "0.3300 ms was its Python" in message["notes"][0]


def test_an_extension_call_is_own_time_less_what_it_dispatched():
    extensions = SimpleNamespace(modules=["kforge_candidate_ext"], own_ns=lambda: int(0.50e6))
    operators = [_operator("aten::mean", 0.10)]
    result = attribution.cpu(
        operators, extensions, wall_ns=int(0.70e6), dispatch_ns=int(0.10e6), extension_dispatch_ns=int(0.10e6)
    )
    message = result.message()
    assert message["by_origin_ms"]["own"] == 0.4
    assert abs(message["own_share"] - 0.4 / 0.5) < 1e-6
    assert message["notes"] == []


def test_each_operator_says_whether_it_did_work_as_the_guard_counts_it():
    operators = [
        OperatorCount(
            name="aten::_softmax", kind=COMPUTE, count=1, largest=4096, result_elements=4096, elapsed_ns=60_000
        ),
        OperatorCount(name="aten::add.Tensor", kind=COMPUTE, count=1, largest=8, result_elements=8, elapsed_ns=90_000),
        OperatorCount(name="aten::copy_", kind=GLUE, count=1, largest=4096, elapsed_ns=40_000),
    ]
    working = torch_fallback.work(operators, output_elements=4096)
    assert [entry.name for entry in working] == ["aten::_softmax"]  # the 8-element add is bookkeeping
    result = attribution.cpu(
        operators,
        None,
        wall_ns=200_000,
        dispatch_ns=150_000,
        extension_dispatch_ns=0,
        working=frozenset(["aten::_softmax"]),
    )
    assert {entry["op"]: entry["compute"] for entry in result.message()["torch_ops"]} == {
        "aten::add.Tensor": False,
        "aten::_softmax": True,
    }  # glue is not listed on cpu; on cuda a copy's kernel is, marked False
    launches = [
        SimpleNamespace(name="copy_kernel", duration_us=30.0, operator=lambda traced: "aten::copy_"),
        SimpleNamespace(name="softmax_kernel", duration_us=10.0, operator=lambda traced: "aten::_softmax"),
    ]
    measured = attribution.device(
        launches, lambda name: False, frozenset({"aten::copy_", "aten::_softmax"}), 0.0, frozenset({"aten::_softmax"})
    )
    assert {entry["op"]: entry["compute"] for entry in measured.message()["torch_ops"]} == {
        "aten::copy_": False,
        "aten::_softmax": True,
    }


def test_small_operators_past_the_bookkeeping_budget_are_work():
    small = [
        OperatorCount(name=f"aten::op{index}", kind=COMPUTE, count=1, largest=64, result_elements=64)
        for index in range(3)
    ]
    assert torch_fallback.work(small, output_elements=4096) == []  # 192 of max(64, 4096 // 16) = 256
    assert torch_fallback.work(small, output_elements=1024) == small  # 192 of 64
