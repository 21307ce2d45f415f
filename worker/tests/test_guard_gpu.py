"""The GPU-only guard checks on the corpus's cuda/ candidates (HACKS.md #1, #3, #14, #15), on a real
GPU: `stale-output` through the caching allocator, `side-stream`, `device-error`, `global-state`
for the persisting-L2 limit, `l2-persist`. Skipped where torch sees no CUDA device.

Every case builds a CUDA extension (about a minute each), three at a time, in the session's build
directory; c15 runs twice (default and permissive policy) from one build.
"""

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from verdicts import verdict
from worker_process import PERMISSIVE, evaluate

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "adversarial"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
CUDA_CASES = [case for case in MANIFEST["cases"] if case["backend"] == "cuda"]
GPU = dict(backend="cuda", device="cuda:0", preset="gpu", perf_trials=20, warmup_trials=3, sample_calls=[5, 19])


@pytest.fixture(scope="module")
def runs(tmp_path_factory, build_dir):
    root = tmp_path_factory.mktemp("guard-gpu")
    jobs = {}
    with ThreadPoolExecutor(max_workers=3) as pool:
        for case in CUDA_CASES:
            jobs[case["file"]] = pool.submit(evaluate, CORPUS / case["problem"], CORPUS / case["file"],
                                             root / Path(case["file"]).stem, build_dir, guard=None, **GPU)
        return {name: job.result() for name, job in jobs.items()}


@pytest.fixture(scope="module")
def permissive_l2(runs, tmp_path_factory, build_dir):
    case = next(case for case in CUDA_CASES if case["file"] == "cuda/c15_l2_persist.py")
    return evaluate(CORPUS / case["problem"], CORPUS / case["file"], tmp_path_factory.mktemp("c15-permissive"),
                    build_dir, guard=PERMISSIVE, **GPU)


@pytest.mark.parametrize("case", CUDA_CASES, ids=[case["file"] for case in CUDA_CASES])
def test_cuda_case_ends_with_its_verdict(runs, case):
    result = runs[case["file"]]
    accepted = {(case["expected_verdict"], case["expected_check"])}
    accepted |= {(item["verdict"], item["check"]) for item in case.get("also_acceptable", [])}
    assert verdict(result) in accepted, (result.failures, result.judgement, result.candidate.stderr[-3000:])
    if case["kind"] == "honest":
        reports = {message["stage"]: {entry["check"]: entry["status"] for entry in message["checks"]}
                   for message in result.candidate.of_type("guard-checks")}
        assert reports["timing"]["side-stream"] == "passed"
        assert reports["timing"]["l2-persist"] in ("passed", "note")
        assert reports["correctness"]["device-error"] == "passed"


def test_side_stream_is_found_from_event_and_wall_times(runs):
    failure = runs["cuda/c03_side_stream.py"].failures["candidate"]
    assert (failure["stage"], failure["kind"], failure["check"]) == ("timing", "rejected", "side-stream")


def test_unwritten_cuda_output_holds_the_poison(runs):
    failure = runs["cuda/c01_stale_allocator.py"].failures["candidate"]
    assert (failure["stage"], failure["check"]) == ("correctness", "stale-output")


def test_persisting_l2_limit_change_is_found_at_run_time(permissive_l2):
    failure = permissive_l2.failures["candidate"]
    assert (failure["kind"], failure["check"]) == ("rejected", "global-state")
    assert "cuda.persisting_l2_limit_bytes changed" in failure["message"]
