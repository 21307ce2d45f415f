"""attribution.cpu: where the host time of a traced cpu call went."""

from types import SimpleNamespace

from kforge_worker.guard import attribution
from kforge_worker.guard.dispatch_ops import COMPUTE
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
