"""Both roles end to end on the cpu backend: the judge's verdict on honest and dishonest candidates."""

import pytest
import torch

import sources
from worker_process import Worker, evaluate, reference_request


@pytest.fixture(scope="module")
def make_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("correctness")

    def make(name: str, source: str):
        path = root / name
        path.write_text(source)
        return path

    return make


@pytest.fixture(scope="module")
def linear_problem(make_files):
    return make_files("linear_relu.py", sources.LINEAR_RELU_PROBLEM)


def run(make_files, tmp_path_factory, build_dir, problem, candidate_source, **settings):
    candidate = make_files(f"candidate_{abs(hash(candidate_source))}.py", candidate_source)
    return evaluate(problem, candidate, tmp_path_factory.mktemp("run"), build_dir, **settings)


@pytest.fixture(scope="module")
def correct_run(make_files, tmp_path_factory, build_dir, linear_problem):
    return run(make_files, tmp_path_factory, build_dir, linear_problem, sources.LINEAR_RELU_CORRECT, run_timing=False)


def test_correct_candidate_passes_every_trial(correct_run):
    judgement = correct_run.judgement
    assert judgement["passed"] is True
    assert [trial["seed"] for trial in judgement["trials"]] == [11, 12]
    for trial in judgement["trials"]:
        assert trial["check"] is None and trial["input_mutated"] is False
        assert trial["mismatch_count"] == 0 and trial["numel"] == 8 * 32
        assert trial["max_abs_error"] < 1e-5
        assert trial["fp64_max_abs_error"] is not None and trial["fp64_max_abs_error"] < 1e-4
    assert correct_run.exit_codes == {"reference": 0, "candidate": 0}


def test_stages_and_hello_follow_the_protocol(correct_run):
    hello = correct_run.candidate.messages[0]
    assert hello["type"] == "hello" and hello["role"] == "candidate" and hello["v"] == 1
    machine = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    assert hello["environment"]["device"] == machine and hello["environment"]["torch"] == torch.__version__
    assert correct_run.candidate.stages() == [
        ("build", "start"),
        ("build", "end"),
        ("load", "start"),
        ("load", "end"),
        ("correctness", "start"),
        ("correctness", "end"),
    ]
    assert correct_run.reference.stages() == [
        ("reference", "start"),
        ("reference", "end"),
        ("judge", "start"),
        ("judge", "end"),
    ]
    assert "candidate forward ran" in correct_run.candidate.stdout


def test_preset_sets_module_constants(correct_run):
    trials = correct_run.ready["trials"]
    assert [trial["seed"] for trial in trials] == [11, 12, 21, 22]
    assert trials[0]["output"] == "[tensor float32 (8, 32)]"
    digests = {trial["seed"]: trial["input_digest"] for trial in trials}
    saved = {entry["seed"]: entry["input_digest"] for entry in correct_run.correctness["outputs"]}
    assert saved == {11: digests[11], 12: digests[12]}


def test_incorrect_candidate_is_a_mismatch(make_files, tmp_path_factory, build_dir, linear_problem):
    result = run(
        make_files, tmp_path_factory, build_dir, linear_problem, sources.LINEAR_RELU_INCORRECT, run_timing=False
    )
    assert result.judgement["passed"] is False
    trial = result.judgement["trials"][0]
    assert trial["check"] == "mismatch"
    assert trial["mismatch_count"] == trial["numel"] == 256
    assert trial["max_abs_error"] == pytest.approx(0.5, abs=1e-5)
    assert "differ by more than" in trial["message"]


def test_nan_output_is_detected(make_files, tmp_path_factory, build_dir, linear_problem):
    result = run(make_files, tmp_path_factory, build_dir, linear_problem, sources.LINEAR_RELU_NAN, run_timing=False)
    trial = result.judgement["trials"][0]
    assert result.judgement["passed"] is False
    assert trial["check"] == "nan" and trial["mismatch_count"] == 1
    assert "index (0, 0)" in trial["message"]


def test_input_mutation_is_detected(make_files, tmp_path_factory, build_dir, linear_problem):
    result = run(
        make_files, tmp_path_factory, build_dir, linear_problem, sources.LINEAR_RELU_MUTATES_INPUT, run_timing=False
    )
    trial = result.judgement["trials"][0]
    assert result.judgement["passed"] is False
    assert trial["input_mutated"] is True and trial["check"] == "input-mutation"
    assert trial["mismatch_count"] == 0


def test_tuple_output_with_non_tensor_leaves(make_files, tmp_path_factory, build_dir):
    problem = make_files("tuple_problem.py", sources.TUPLE_PROBLEM)
    result = run(make_files, tmp_path_factory, build_dir, problem, sources.TUPLE_CORRECT, run_timing=False)
    assert result.ready["trials"][0]["output"] == ("[(tensor float32 (6, 3), [tensor float32 (3,), int], NoneType)]")
    trial = result.judgement["trials"][0]
    assert result.judgement["passed"] is True, trial
    assert trial["numel"] == 18 + 3 + 1 + 1
    assert trial["fp64_max_abs_error"] is None and trial["fp64_max_rel_error"] is None


def test_get_inputs_raising_is_invalid_input_in_both_roles(make_files, tmp_path_factory, build_dir):
    problem = make_files("inputs_raise.py", sources.INPUTS_RAISE_PROBLEM)
    result = run(make_files, tmp_path_factory, build_dir, problem, sources.IDENTITY_CANDIDATE)
    for role in ("reference", "candidate"):
        failure = result.failures[role]
        assert (failure["kind"], failure["check"]) == ("invalid_input", "problem-inputs")
        assert "get_inputs is broken" in failure["message"]
    assert result.failures["reference"]["stage"] == "reference"
    assert result.failures["candidate"]["stage"] == "correctness"
    assert result.exit_codes == {"reference": 0, "candidate": 0}


def test_reference_forward_raising_is_invalid_input(write, tmp_path):
    problem = write("reference_raises.py", sources.REFERENCE_RAISES_PROBLEM)
    worker = Worker("reference", tmp_path / "reference")
    try:
        worker.send(reference_request(problem))
        failure = worker.read_until("reference-ready")
        assert failure["type"] == "failure"
        assert (failure["stage"], failure["kind"], failure["check"]) == (
            "reference",
            "invalid_input",
            "reference-forward",
        )
        assert "ZeroDivisionError: the reference is broken" in failure["message"]
        assert "Traceback" in failure["traceback"]
        assert worker.finish() == 0
    finally:
        worker.kill()


def test_missing_output_file_is_reported(write, tmp_path, linear_problem):
    worker = Worker("reference", tmp_path / "reference")
    try:
        worker.send(reference_request(linear_problem))
        assert worker.read_until("reference-ready")["type"] == "reference-ready"
        worker.send(
            {
                "type": "judge",
                "atol": 0.01,
                "rtol": 0.01,
                "outputs": [
                    {"seed": 11, "path": str(tmp_path / "nothing.pt"), "input_digest": "0"},
                    {"seed": 12, "path": str(write("garbage.pt", "not a torch file"))},
                ],
            }
        )
        judgement = worker.read_until("judgement")
        assert judgement["passed"] is False
        checks = [(trial["check"], trial["input_mutated"]) for trial in judgement["trials"]]
        assert checks == [("missing-output", True), ("missing-output", None)]
        assert worker.finish() == 0
    finally:
        worker.kill()


def test_bf16_run_casts_inputs_and_weights(make_files, tmp_path_factory, build_dir, linear_problem):
    result = run(
        make_files,
        tmp_path_factory,
        build_dir,
        linear_problem,
        sources.LINEAR_RELU_SAME_OPS,
        run_timing=False,
        precision="bf16",
    )
    assert result.ready["trials"][0]["output"] == "[tensor bfloat16 (8, 32)]"
    assert result.judgement["passed"] is True
    trial = result.judgement["trials"][0]
    assert trial["max_abs_error"] == 0.0
    assert 0 < trial["fp64_max_abs_error"] < 0.1
