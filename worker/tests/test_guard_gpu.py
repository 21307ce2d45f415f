"""The GPU-only guard checks on the corpus's cuda/ candidates (docs/hacks.md #1, #3, #6, #14, #15), on a
real GPU: `stale-output` through the caching allocator, `side-stream`, `device-error`,
`global-state` for the persisting-L2 limit, `l2-persist`, `own-kernel` (the profiler's kernels of
the traced correctness call). Skipped where torch sees no CUDA device.

Every case but the Triton one (h06) builds a CUDA extension (about a minute each), three at a
time, in the session's build directory; c15 runs twice (default and permissive policy) from one
build. The policy cases (`policies` in the manifest: c07c, c06f, h06f, h06g, which share one
extension) run once more under every other shipped policy (own-kernels, strict, permissive,
pytorch), and each traced call's attribution (device time) is checked.
"""

import json
import os
import statistics
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from kforge_worker.guard.kernel_trace import all_threads_config
from kforge_worker.guard.policy import DEFAULT_POLICY, POLICY_NAMES
from native_exceptions import platform_crash
from verdicts import reported_figure, substituted_ops, verdict
from worker_process import PERMISSIVE, evaluate

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "adversarial"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
CUDA_CASES = [case for case in MANIFEST["cases"] if case["backend"] == "cuda"]
GPU = dict(backend="cuda", device="cuda:0", preset="gpu", perf_trials=20, warmup_trials=3, sample_calls=[5, 19])
#: Evaluations at once (each a reference and a candidate process): builds are most of the run's time;
#: KFORGE_GPU_TEST_JOBS raises it on a machine with cores to spare (every check must hold under it).
JOBS = int(os.environ.get("KFORGE_GPU_TEST_JOBS", "3"))
POLICY_RUNS = [
    (case, policy) for case in CUDA_CASES if "policies" in case for policy in POLICY_NAMES if policy != DEFAULT_POLICY
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, build_dir):
    root = tmp_path_factory.mktemp("guard-gpu")
    jobs = {}
    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        for case in CUDA_CASES:
            jobs[case["file"]] = pool.submit(
                evaluate,
                CORPUS / case["problem"],
                CORPUS / case["file"],
                root / Path(case["file"]).stem,
                build_dir,
                guard=None,
                **GPU,
            )
        for case, policy in POLICY_RUNS:
            jobs[f"{case['file']}#{policy}"] = pool.submit(
                evaluate,
                CORPUS / case["problem"],
                CORPUS / case["file"],
                root / f"{Path(case['file']).stem}-{policy}",
                build_dir,
                guard={"policy": policy},
                **GPU,
            )
        return {name: job.result() for name, job in jobs.items()}


@pytest.fixture(scope="module")
def permissive_l2(runs, tmp_path_factory, build_dir):
    case = next(case for case in CUDA_CASES if case["file"] == "cuda/c15_l2_persist.py")
    return evaluate(
        CORPUS / case["problem"],
        CORPUS / case["file"],
        tmp_path_factory.mktemp("c15-permissive"),
        build_dir,
        guard=PERMISSIVE,
        **GPU,
    )


@pytest.mark.parametrize("case", CUDA_CASES, ids=[case["file"] for case in CUDA_CASES])
def test_cuda_case_ends_with_its_verdict(runs, case):
    result = runs[case["file"]]
    if why := platform_crash(case, result):
        pytest.skip(why)
    accepted = {
        (
            case.get("default_verdict", case["expected_verdict"]),
            case["expected_check"] if "default_verdict" not in case else None,
        )
    }
    accepted |= {(item["verdict"], item["check"]) for item in case.get("also_acceptable", [])}
    assert verdict(result) in accepted, (result.failures, result.judgement, result.candidate.stderr[-3000:])
    if case["kind"] == "honest":
        reports = {
            message["stage"]: {entry["check"]: entry["status"] for entry in message["checks"]}
            for message in result.candidate.of_type("guard-checks")
        }
        assert reports["timing"]["side-stream"] == "passed"
        assert reports["timing"]["l2-persist"] in ("passed", "note")
        assert reports["correctness"]["device-error"] == "passed"
        assert reports["correctness"]["own-kernel"] == "passed", result.candidate.of_type("guard-checks")


def _checks(result, stage: str) -> dict:
    message = next(message for message in result.candidate.of_type("guard-checks") if message["stage"] == stage)
    return {entry["check"]: entry for entry in message["checks"]}


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


def test_kernel_built_but_never_launched_is_found_by_the_profiler(runs):
    """c06 replays PyTorch's relu from a CUDA graph and never launches the kernel it builds."""
    failure = runs["cuda/c06_graph_replay.py"].failures["candidate"]
    assert (failure["stage"], failure["kind"], failure["check"]) == ("correctness", "rejected", "own-kernel")
    assert "correctness trial 0" in failure["message"]
    assert "launched no kernel of the candidate's own: only " in failure["message"]
    assert "vectorized_elementwise_kernel<…>" in failure["message"]
    assert "it builds relu_kernel, and forward must launch it" in failure["message"]


@pytest.mark.parametrize(
    "file, kernel",
    [("cuda/h01_writes_output.py", "relu_kernel ×1"), ("cuda/h06_triton_relu.py", "kforge_relu_kernel ×1")],
)
def test_own_kernels_that_ran_are_named(runs, file, kernel):
    entry = _checks(runs[file], "correctness")["own-kernel"]
    assert entry["status"] == "passed"
    assert f"its own kernel(s) ran: {kernel}" in entry["message"], entry


def test_other_threads_are_profiled_where_torch_can(runs):
    """torch 2.x records every thread's operators in the traced call; h01's other threads dispatch none."""
    entry = _checks(runs["cuda/h01_writes_output.py"], "correctness")["torch-fallback"]
    assert entry["status"] == "passed"
    expected = (
        "no operator dispatched on any other thread"
        if all_threads_config()[0] is not None
        else "operators on other threads not traced"
    )
    assert expected in entry["message"], entry


@pytest.mark.parametrize("case, policy", POLICY_RUNS, ids=[f"{case['file']}#{policy}" for case, policy in POLICY_RUNS])
def test_cuda_case_ends_with_its_verdict_under_each_policy(runs, case, policy):
    result = runs[f"{case['file']}#{policy}"]
    if why := platform_crash(case, result):
        pytest.skip(why)
    expected = case["policies"][policy]
    assert verdict(result) == (expected["verdict"], expected["check"]), (
        result.failures,
        result.candidate.stderr[-3000:],
    )


@pytest.mark.parametrize("file", [case["file"] for case in CUDA_CASES if "policies" in case])
def test_cuda_attribution_is_measured_in_device_time(runs, file):
    case = next(case for case in CUDA_CASES if case["file"] == file)
    if why := platform_crash(case, runs[file]):
        pytest.skip(why)
    attribution = runs[file].message("candidate", "attribution")
    assert attribution is not None and attribution["measured"] == "device", runs[file].candidate.messages
    assert attribution["unavailable"] is None, attribution
    origin = attribution["by_origin_ms"]
    assert sum(origin.values()) > 0 and 0 <= attribution["own_share"] <= 1, attribution


def test_a_candidate_of_one_own_kernel_has_all_the_device_time(runs):
    """h15 launches one kernel of its own and allocates its output: no library time, no operator
    time (the device-side copies of the worker's `record_function` range are not kernels)."""
    attribution = runs["cuda/h15_plain_kernel.py"].message("candidate", "attribution")
    assert attribution["by_origin_ms"]["library"] == 0 and attribution["by_origin_ms"]["torch"] == 0, attribution
    assert attribution["own_share"] == 1, attribution


def test_a_kept_cublas_gemm_is_charged_to_the_references_operator(runs):
    result = runs["cuda/h06f_kept_gemm_epilogue.py"]
    attribution = result.message("candidate", "attribution")
    assert attribution["by_origin_ms"]["own"] > 0, attribution
    assert {entry["op"] for entry in attribution["torch_ops"]} & {
        "aten::mm",
        "aten::addmm",
        "aten::linear",
        "aten::matmul",
    }, attribution
    assert substituted_ops(result) == []


def test_a_substituted_softmax_is_named_in_device_time(runs):
    assert substituted_ops(runs["cuda/c06f_substituted_op.py"]) == ["aten::_softmax"]


FIGURE_CASES = [case for case in CUDA_CASES if case.get("figure") == "trusted"]


@pytest.mark.parametrize("case", FIGURE_CASES, ids=[case["file"] for case in FIGURE_CASES])
def test_forged_event_times_gain_nothing(runs, case):
    """docs/timing.md, P1, on a GPU: c05h divides every CUDA event time of its process by 100 through
    the GOT; the parent reports its own trusted figure, within a factor of the honest twin's (which
    may itself be the trusted figure where the small relu is launch-bound)."""
    result = runs[case["file"]]
    assert "ATTACK c05h: patched 0 " not in result.candidate.stderr, "the attack could not take effect on this build"
    if verdict(result) == ("rejected", "side-stream"):
        # Its forged event times (a hundredth of the truth) set the side-stream threshold to the
        # slack alone, which a loaded host's gaps passed on the H200 (2026-12-05): rejected, so no
        # figure is reported and the forgery gains nothing either.
        return
    reported, source = reported_figure(result)
    in_process = statistics.median(result.timing["times_ms"])
    honest, _ = reported_figure(runs[case["twin"]])
    assert source == "trusted-batch", (in_process, result.batches)
    assert reported > in_process * 100 / 4, "the forgery took effect in the candidate's process"
    assert reported > honest / 4, f"{reported} ms reported against {honest} ms for the honest relu"
