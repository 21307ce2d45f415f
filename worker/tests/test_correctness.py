"""Both roles end to end on the cpu backend: the judge's verdict on honest and dishonest candidates."""

import os

import pytest
import torch

import sources
from worker_process import Worker, evaluate, handover_pipe, reference_request


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
    # One judge stage per output: each is judged the moment it is handed over.
    assert correct_run.reference.stages() == [("reference", "start"), ("reference", "end")] + [
        ("judge", "start"),
        ("judge", "end"),
    ] * len(correct_run.correctness["outputs"])
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


def _judge_one(worker: Worker, output: dict, write_bytes=None) -> dict:
    """Sends one hand-over to a reference worker as the parent relays it; `write_bytes(fd)` plays the
    candidate's side of the pipe when the judge asks for the bytes. Returns the judgement."""
    worker.send({"type": "judge", "atol": 0.01, "rtol": 0.01, "outputs": [output]})
    while True:
        message = worker.read_until("handover-ready", "judgement")
        if message["type"] == "judgement":
            return message
        assert write_bytes is not None, "the judge asked for bytes of an output it should have refused"
        write_bytes()


def _tensor_header(shape, dtype="float32", skeleton="T"):
    nbytes = 4
    for size in shape:
        nbytes *= size
    return {
        "skeleton": skeleton,
        "leaf_info": [{"type": "tensor", "device": "cpu"}],
        "leaves": [{"tensor": {"dtype": dtype, "shape": list(shape), "nbytes": nbytes}}],
        "ipc": None,
    }


def test_forged_headers_are_refused_before_any_byte(tmp_path, linear_problem):
    """The judge checks a hand-over's header against the reference's own output before it allocates
    or reads anything: a 1 TiB shape, another structure, a path, no header at all. Each is the
    candidate's trial failure, and the messages never depend on the host's files."""
    pipe = handover_pipe(tmp_path / "scratch")
    worker = Worker("reference", tmp_path / "reference")
    try:
        worker.send({**reference_request(linear_problem), "handover_pipe": str(pipe)})
        ready = worker.read_until("reference-ready")
        assert ready["type"] == "reference-ready"
        # Each trial's pace, by which the parent sizes the candidate's stage limits.
        assert all(trial["trial_ms"] >= trial["forward_ms"] > 0 for trial in ready["trials"])
        shape = [int(size) for size in ready["trials"][0]["output"].split("(")[1].split(")")[0].split(",")]
        forged = [
            ("huge", _tensor_header([1 << 20, 1 << 18]), "shape"),
            ("tuple", _tensor_header(shape, skeleton="(T,)"), "structure"),
            ("path", {"path": "/etc/shadow"}, "structure"),
            (
                "subclass",
                {**_tensor_header(shape), "leaf_info": [{"type": "tensor-subclass:Lazy", "device": "cpu"}]},
                "structure",
            ),
        ]
        for name, header, check in forged:
            judgement = _judge_one(worker, {"id": name, "seed": 11, "input_digest": None, **header})
            trial = judgement["trials"][0]
            assert (trial["passed"], trial["check"]) == (False, check), (name, trial)
            assert "shadow" not in trial["message"] and "exist" not in trial["message"]
        assert not worker.of_type("handover-received")
        assert worker.finish() == 0
    finally:
        worker.kill()


def test_pipe_handover_takes_exact_bytes_and_refuses_extra(tmp_path, linear_problem):
    """An honest hand-over through the pipe is judged on exactly the bytes written; bytes beyond
    the output (another writer on the pipe) are the candidate's `handover` failure."""
    pipe = handover_pipe(tmp_path / "scratch")
    worker = Worker("reference", tmp_path / "reference")
    try:
        worker.send({**reference_request(linear_problem), "handover_pipe": str(pipe)})
        ready = worker.read_until("reference-ready")
        shape = [int(size) for size in ready["trials"][0]["output"].split("(")[1].split(")")[0].split(",")]
        zeros = bytes(4 * shape[0] * shape[1])
        fd = os.open(pipe, os.O_WRONLY)
        try:
            judgement = _judge_one(
                worker,
                {"id": "correctness-0", "seed": 11, "input_digest": None, **_tensor_header(shape)},
                lambda: os.write(fd, zeros),
            )
            trial = judgement["trials"][0]
            assert trial["check"] == "mismatch" and trial["max_abs_error"] > 0  # zeros are wrong, but judged
            received = worker.of_type("handover-received")
            assert [(message["transport"], message["bytes"]) for message in received] == [("pipe", len(zeros))]
            judgement = _judge_one(
                worker,
                {"id": "correctness-1", "seed": 12, "input_digest": None, **_tensor_header(shape)},
                lambda: os.write(fd, zeros + b"extra"),
            )
            assert judgement["trials"][0]["check"] == "handover"
        finally:
            os.close(fd)
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
