"""KFORGE_GUARD_RUNTIME, the benchmark-only switch of the run-time checks (guard_settings.py): off
turns them off and every `guard-checks` message says so; any other value than on/off is the
parent's fault (exit status 2)."""

from pathlib import Path

import pytest

from kforge_worker.protocol.channel import ProtocolError
from kforge_worker.guard.guard_settings import RUNTIME_SWITCH, runtime_checks_enabled
from verdicts import verdict
from worker_process import Worker, candidate_request, evaluate

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "adversarial"
RELU = CORPUS / "problems" / "relu.py"


@pytest.mark.parametrize(
    "environment, enabled",
    [({}, True), ({RUNTIME_SWITCH: "on"}, True), ({RUNTIME_SWITCH: " OFF "}, False), ({RUNTIME_SWITCH: "off"}, False)],
)
def test_the_switch_is_read_and_removed(environment, enabled):
    assert runtime_checks_enabled(environment) is enabled
    assert RUNTIME_SWITCH not in environment


def test_another_value_is_a_protocol_error():
    with pytest.raises(ProtocolError, match="KFORGE_GUARD_RUNTIME"):
        runtime_checks_enabled({RUNTIME_SWITCH: "sometimes"})


def test_with_the_checks_off_a_run_time_cheat_passes_and_the_messages_say_so(tmp_path, build_dir):
    result = evaluate(
        RELU,
        CORPUS / "cpu" / "c06c_importlib_vars.py",
        tmp_path / "off",
        build_dir,
        guard=None,
        candidate_env={RUNTIME_SWITCH: "off"},
    )
    assert verdict(result) == ("correct", None), result.failures
    reports = result.candidate.of_type("guard-checks")
    assert [report["stage"] for report in reports] == ["correctness", "timing"]
    for report in reports:
        assert [entry["check"] for entry in report["checks"]] == ["guard-runtime"]
        assert report["checks"][0]["status"] == "note" and "KFORGE_GUARD_RUNTIME=off" in report["checks"][0]["message"]
    assert result.timing["contents_per_model"] == 1


def test_a_bad_switch_value_stops_the_worker(tmp_path, build_dir):
    worker = Worker("candidate", tmp_path / "scratch", env={RUNTIME_SWITCH: "sometimes"})
    try:
        worker.send(
            candidate_request(RELU, CORPUS / "cpu" / "h06d_glue_around_kernel.py", tmp_path / "scratch", build_dir)
        )
        assert worker.finish() == 2
    finally:
        worker.kill()
    assert "KFORGE_GUARD_RUNTIME" in worker.stderr and not worker.of_type("failure")
