"""The candidate role alone: each way a candidate can fail, as the `failure` message it writes."""

import pytest

import sources
from worker_process import Worker, candidate_request


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    path = tmp_path_factory.mktemp("problem") / "linear_relu.py"
    path.write_text(sources.LINEAR_RELU_PROBLEM)
    return path


def run_candidate(tmp_path, build_dir, problem, source: str) -> Worker:
    candidate = tmp_path / "candidate.py"
    candidate.write_text(source)
    worker = Worker("candidate", tmp_path / "scratch")
    try:
        worker.send(candidate_request(problem, candidate, tmp_path / "scratch", build_dir))
        if worker.read_until("correctness-outputs")["type"] == "correctness-outputs":
            worker.send({"type": "continue"})
            worker.read_until("timing")
        assert worker.finish() == 0, worker.stderr
    finally:
        worker.kill()
    return worker


def only_failure(worker: Worker) -> dict:
    failures = worker.of_type("failure")
    assert len(failures) == 1, worker.messages
    return failures[0]


@pytest.mark.parametrize(
    "source, stage, kind, check, text",
    [
        (sources.SYNTAX_ERROR, "build", "invalid_input", "candidate-load", "syntax error at line 4"),
        (sources.NO_MODEL_NEW, "build", "invalid_input", "candidate-load", "defines no ModelNew"),
        (sources.RAISES_ON_IMPORT, "build", "runtime_error", "import", "candidate refuses to import"),
        (sources.CONSTRUCTOR_RAISES, "load", "runtime_error", "construct", "no weights for you"),
        (sources.FORWARD_RAISES, "correctness", "runtime_error", "forward", "IndexError: forward blew up on purpose"),
        (sources.PATCHES_TIMER, "build", "rejected", "timer-patched", "time.perf_counter_ns"),
        (sources.FAKE_TRITON_COMPILE_ERROR, "correctness", "compile_error", "build", "unsupported tensor index"),
    ],
    ids=[
        "syntax-error",
        "no-model-new",
        "import-raises",
        "constructor-raises",
        "forward-raises",
        "timer-patched",
        "triton-compile-error-at-first-call",
    ],
)
def test_candidate_failure(tmp_path, build_dir, problem, source, stage, kind, check, text):
    worker = run_candidate(tmp_path, build_dir, problem, source)
    failure = only_failure(worker)
    assert (failure["stage"], failure["kind"], failure["check"]) == (stage, kind, check)
    assert text in failure["message"]
    assert not worker.of_type("correctness-outputs")
    started = [name for name, status in worker.stages() if status == "start"]
    ended = [name for name, status in worker.stages() if status == "end"]
    assert started[-1] == stage and stage not in ended


def test_missing_candidate_file_is_invalid_input(tmp_path, build_dir, problem):
    worker = Worker("candidate", tmp_path / "scratch")
    try:
        worker.send(candidate_request(problem, tmp_path / "absent.py", tmp_path / "scratch", build_dir))
        failure = worker.read_until("correctness-outputs")
        assert (failure["kind"], failure["check"]) == ("invalid_input", "candidate-load")
        assert "cannot be read" in failure["message"]
        assert worker.finish() == 0
    finally:
        worker.kill()


def test_bad_request_exits_with_status_2(tmp_path, build_dir, problem):
    worker = Worker("candidate", tmp_path / "scratch")
    try:
        request = candidate_request(problem, problem, tmp_path / "scratch", build_dir, perf_trials=-3)
        worker.send(request)
        assert worker.finish() == 2
        assert "expected `perf_trials` to be a non-negative integer, got -3" in worker.stderr
        assert [message["type"] for message in worker.messages] == ["hello"]
    finally:
        worker.kill()


# No imports and no constants of its own but one: it reads the problem's `torch`, `batch_size` (as
# the cpu preset set it) and `features`, as KernelBench's harness lets a candidate do (it executes
# the reference and then the candidate in one namespace); its own `scale` replaces the problem's.
READS_PROBLEM_NAMES = """
scale = 1.0

class ModelNew(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.linear = torch.nn.Linear(width, features)

    def forward(self, x):
        if x.shape != (batch_size, features) or batch_size != 8 or scale != 1.0:
            raise RuntimeError(f"saw batch_size={batch_size} features={features} scale={scale}")
        return torch.relu(self.linear(x)) * scale
"""


def test_candidate_starts_from_the_problem_names(tmp_path, build_dir, problem_with_scale):
    candidate = tmp_path / "candidate.py"
    candidate.write_text(READS_PROBLEM_NAMES)
    worker = Worker("candidate", tmp_path / "scratch")
    try:
        worker.send(candidate_request(problem_with_scale, candidate, tmp_path / "scratch", build_dir))
        reply = worker.read_until("correctness-outputs")
        assert reply["type"] == "correctness-outputs", reply
        assert len(reply["outputs"]) == 2
        worker.send({"type": "stop"})
        assert worker.finish() == 0, worker.stderr
    finally:
        worker.kill()


@pytest.fixture(scope="module")
def problem_with_scale(tmp_path_factory):
    path = tmp_path_factory.mktemp("problem") / "linear_relu_scaled.py"
    path.write_text(sources.LINEAR_RELU_PROBLEM + "\nscale = 3.0\n")
    return path
