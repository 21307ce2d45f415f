"""The guard's protocol: the `guard` request field, the `guard` message and static rejections,
and the `audit` command."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import sources
from worker_process import WORKER_ROOT, Worker, candidate_request, reference_request

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "adversarial"

# Its forward calls the reference Model, the problem's (the candidate runs in a namespace that starts
# with the problem's names): a static finding that cannot be honest whatever runs. A `Model` the
# candidate defined itself would be its own code, judged by what runs (docs/guard.md).
TORCH_CANDIDATE_THAT_PRINTS = """
import torch
print("kforge: the candidate module ran")

class ModelNew(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.reference = Model(features)

    def forward(self, x):
        return self.reference(x)
"""


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    path = tmp_path_factory.mktemp("problem") / "linear_relu.py"
    path.write_text(sources.LINEAR_RELU_PROBLEM)
    return path


def run_candidate(tmp_path, build_dir, problem, source: str, guard) -> Worker:
    candidate = tmp_path / "candidate.py"
    candidate.write_text(source)
    worker = Worker("candidate", tmp_path / "scratch")
    try:
        worker.send(candidate_request(problem, candidate, tmp_path / "scratch", build_dir, guard=guard))
        if worker.read_until("correctness-outputs")["type"] == "correctness-outputs":
            worker.send({"type": "stop"})
        worker.finish()
    finally:
        worker.kill()
    return worker


def test_static_rejection_happens_before_the_candidate_runs(tmp_path, build_dir, problem):
    worker = run_candidate(tmp_path, build_dir, problem, TORCH_CANDIDATE_THAT_PRINTS, guard=None)
    guard = worker.of_type("guard")[0]
    assert guard["policy"] == "kernelbench"
    rejects = [finding for finding in guard["findings"] if finding["severity"] == "reject"]
    assert rejects and {finding["check"] for finding in rejects} == {"torch-fallback"}
    assert all(set(finding) == {"check", "severity", "message", "line"} for finding in guard["findings"])
    failure = worker.of_type("failure")[0]
    assert (failure["stage"], failure["kind"], failure["check"]) == ("build", "rejected", "torch-fallback")
    assert failure["message"] == rejects[0]["message"]
    assert "the candidate module ran" not in worker.stdout
    assert [message["type"] for message in worker.messages][:3] == ["hello", "stage", "guard"]


def test_a_policy_object_can_turn_a_check_into_a_note(tmp_path, build_dir, problem):
    policy = {"base": "own-kernels", "name": "lenient", "severity": {"torch-fallback": "note"}}
    worker = run_candidate(tmp_path, build_dir, problem, TORCH_CANDIDATE_THAT_PRINTS, guard={"policy": policy})
    guard = worker.of_type("guard")[0]
    assert guard["policy"] == "lenient"
    assert guard["findings"] and all(finding["severity"] == "note" for finding in guard["findings"])
    assert not worker.of_type("failure"), worker.of_type("failure")
    assert worker.of_type("correctness-outputs") and "the candidate module ran" in worker.stdout


@pytest.mark.parametrize(
    "role, guard",
    [
        ("candidate", {"policy": "nonexistent"}),
        ("candidate", {"policy": "kernelbench", "gate": True}),
        ("reference", {"gate_specialisation": 1}),
    ],
)
def test_a_bad_guard_field_is_a_protocol_error(tmp_path, build_dir, problem, role, guard):
    worker = Worker(role, tmp_path / role)
    try:
        if role == "candidate":
            worker.send(candidate_request(problem, problem, tmp_path / "scratch", build_dir, guard=guard))
        else:
            worker.send(reference_request(problem, guard=guard))
        assert worker.finish() == 2
        assert "guard" in worker.stderr and not worker.of_type("failure")
    finally:
        worker.kill()


def test_reference_audit_and_roofline_messages(tmp_path, problem):
    worker = Worker("reference", tmp_path / "reference")
    try:
        worker.send(
            reference_request(
                problem, atol=0.01, rtol=0.01, ceilings={"bandwidth_bytes_per_s": 1e10, "peak_flops_per_s": 1e9}
            )
        )
        assert worker.read_until("reference-ready")["type"] == "reference-ready"
        audit = worker.next_message()
        roofline = worker.next_message()
        # The second of the two correctness seeds is the stressed trial, which the audit leaves out.
        assert audit["type"] == "audit" and audit["degenerate"] is False and audit["trials"] == 1
        assert set(audit["trivial"]) == {"zeros", "mean", "ones", "input"}
        assert roofline["type"] == "roofline" and roofline["flops"] == 2 * 8 * 32 * 32
        assert roofline["bytes"] == (8 * 32 + 32 * 32 + 32 + 8 * 32) * 4
        assert roofline["lower_bound_ms"] == pytest.approx(roofline["flops"] / 1e9 * 1e3)
        assert worker.finish() == 0
    finally:
        worker.kill()


def audit(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kforge_worker", "audit", *arguments],
        cwd=WORKER_ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_audit_command_finds_the_wide_softmax_degenerate():
    done = audit(str(CORPUS / "problems" / "softmax.py"), "--preset", "cpu", "--atol", "0.01", "--rtol", "0.01")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["degenerate"] is True and result["passing"] == ["zeros", "mean"]
    assert result["trivial"]["zeros"]["passes"] is True and result["trivial"]["ones"]["passes"] is False
    assert result["seeds"] == [11, 12, 13, 14, 15] and result["trials"] == 5 and result["preset"] == "cpu"


def test_audit_command_finds_relu_and_a_strict_softmax_sound():
    relu = json.loads(audit(str(CORPUS / "problems" / "relu.py"), "--preset", "cpu").stdout)
    assert relu["degenerate"] is False and relu["passing"] == [] and relu["trivial"]["input"]["applicable"]
    strict = audit(str(CORPUS / "problems" / "softmax.py"), "--atol", "1e-5", "--rtol", "1e-5", "--seeds", "3,4")
    result = json.loads(strict.stdout)
    assert result["degenerate"] is False and result["seeds"] == [3, 4] and result["atol"] == 1e-5


def test_audit_command_errors(tmp_path):
    missing = audit(str(tmp_path / "absent.py"))
    assert missing.returncode == 1
    assert json.loads(missing.stdout)["error"]["check"] == "problem-load"
    misused = audit(str(CORPUS / "problems" / "relu.py"), "--atol", "minus-one")
    assert misused.returncode == 2 and misused.stdout == "" and "--atol" in misused.stderr
