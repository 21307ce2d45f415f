"""Timed calls of the candidate and the baselines (cpu backend: host clock)."""

import pytest
import torch

import sources
from worker_process import evaluate

PERF_TRIALS = 7
BASELINES = {"eager": True, "compile": True, "perf_trials": 5, "warmup_trials": 1}


@pytest.fixture(scope="module")
def timed_run(tmp_path_factory, build_dir):
    root = tmp_path_factory.mktemp("timing")
    problem = root / "linear_relu.py"
    problem.write_text(sources.LINEAR_RELU_PROBLEM)
    candidate = root / "candidate.py"
    candidate.write_text(sources.LINEAR_RELU_CORRECT)
    return evaluate(
        problem,
        candidate,
        root / "run",
        build_dir,
        baselines=BASELINES,
        perf_trials=PERF_TRIALS,
        warmup_trials=2,
        sample_calls=[0, 4, 5],
        timing_seeds=(21, 22, 23),
        batch_calls=4,
    )


def test_candidate_timing_returns_one_time_per_call(timed_run):
    timing = timed_run.timing
    assert timing["type"] == "timing"
    assert len(timing["times_ms"]) == len(timing["wall_ms"]) == PERF_TRIALS
    assert all(time_ms > 0 for time_ms in timing["times_ms"])
    assert timed_run.candidate.stages()[-2:] == [("timing", "start"), ("timing", "end")]
    assert timed_run.exit_codes == {"reference": 0, "candidate": 0}


def test_sampled_timed_outputs_rotate_seeds_and_match_their_reference(timed_run):
    samples = timed_run.timing["samples"]
    assert [(sample["call"], sample["seed"]) for sample in samples] == [(0, 21), (4, 22), (5, 23)]
    assert all(sample["id"] == f"timed-{sample['call']}" for sample in samples)
    judgement = timed_run.timed_judgement
    assert judgement["passed"] is True
    kept = samples + [sample for batch in timed_run.batches for sample in batch.samples]
    assert [trial["input_mutated"] for trial in judgement["trials"]] == [False] * len(kept)
    assert all(sample["input_seed"] != sample["seed"] for sample in samples[1:])
    assert [trial["input_seed"] for trial in judgement["trials"]] == [sample["input_seed"] for sample in kept]


def test_the_parent_runs_three_batches_on_contents_never_timed_before(timed_run):
    timing, batches = timed_run.timing, timed_run.batches
    assert [batch.calls for batch in batches] == [4, 4, 4]
    assert all(batch.elapsed_ms > 0 and len(batch.overhead_ms) == 3 for batch in batches)
    per_call = {sample["input_seed"] for sample in timing["samples"]}
    batch_seeds = [sample["input_seed"] for batch in batches for sample in batch.samples]
    assert len(batch_seeds) == 3 and not per_call & set(batch_seeds)
    assert [sample["id"].split("-")[1] for batch in batches for sample in batch.samples] == ["0", "1", "2"]
    assert timing["warmup_calls"] == 2 and len(timing["gap_ms"]) == PERF_TRIALS


def test_a_warmup_by_time_lets_the_parent_ask_for_more_warmup_calls(timed_run, tmp_path, build_dir):
    problem, candidate = tmp_path / "linear_relu.py", tmp_path / "candidate.py"
    problem.write_text(sources.LINEAR_RELU_PROBLEM)
    candidate.write_text(sources.LINEAR_RELU_CORRECT)
    settings = dict(perf_trials=PERF_TRIALS, warmup_trials=2, sample_calls=[0, 4, 5], timing_seeds=(21, 22, 23))
    warm = evaluate(problem, candidate, tmp_path / "warm", build_dir, warmup_calls=9, warmup_ms=50.0, **settings)
    assert warm.violation is None and warm.timing["type"] == "timing" and warm.timing["warmup_calls"] == 9
    assert warm.timed_judgement["passed"] is True
    # The timed calls' contents do not move with the warm-up's length.
    seeds = [(sample["call"], sample["input_seed"]) for sample in warm.timing["samples"]]
    assert seeds == [(sample["call"], sample["input_seed"]) for sample in timed_run.timing["samples"]]
    refused = evaluate(problem, candidate, tmp_path / "count", build_dir, warmup_calls=3, **settings)
    assert refused.timing["type"] == "failure"
    assert "the parent asked for warmup call 2; the request allows 2" in refused.timing["message"]


def test_baselines_warm_up_by_time_when_asked(tmp_path, build_dir):
    problem, candidate = tmp_path / "linear_relu.py", tmp_path / "candidate.py"
    problem.write_text(sources.LINEAR_RELU_PROBLEM)
    candidate.write_text(sources.LINEAR_RELU_CORRECT)
    baselines = dict(BASELINES, compile=False, warmup_ms=30.0)
    run = evaluate(problem, candidate, tmp_path / "run", build_dir, baselines=baselines, run_timing=False)
    eager = run.baseline["eager"]
    assert eager["warmup_calls"] > BASELINES["warmup_trials"] and len(eager["times_ms"]) == BASELINES["perf_trials"]


def test_baselines_time_the_requested_number_of_calls(timed_run):
    baseline = timed_run.baseline
    assert baseline["type"] == "baseline"
    assert len(baseline["eager"]["times_ms"]) == len(baseline["eager"]["wall_ms"]) == BASELINES["perf_trials"]
    assert len(baseline["eager"]["batch_ms"]) == 3 and all(value > 0 for value in baseline["eager"]["batch_ms"])
    assert baseline["eager"]["budget_stopped"] is False
    if hasattr(torch, "compile"):
        assert len(baseline["compile"]["times_ms"]) == BASELINES["perf_trials"]
    else:
        major_minor = ".".join(torch.__version__.split(".")[:2])
        assert baseline["compile"] == {"error": f"torch {major_minor} has no torch.compile"}
    stages = timed_run.reference.stages()
    assert stages[:4] == [("reference", "start"), ("reference", "end"), ("baseline", "start"), ("baseline", "end")]
