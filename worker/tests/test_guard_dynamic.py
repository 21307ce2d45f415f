"""Each run-time check of the guard, through both worker processes (cpu backend).

The candidates are PyTorch programs and run under the `pytorch` policy (static findings are notes,
no kernel of their own is required), so that the dynamic check under test is the one that decides;
one of them runs under `permissive` too, which requires a kernel of the candidate's own.
GPU-only checks are in test_guard_gpu.py.
"""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import guard_sources
from verdicts import verdict
from worker_process import PERMISSIVE, PYTORCH, evaluate

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "adversarial"
RELU = CORPUS / "problems" / "relu.py"
SOFTMAX = CORPUS / "problems" / "softmax.py"

CASES = {
    "lingering-thread": (RELU, guard_sources.LINGERING_THREAD),
    "raw-thread": (RELU, guard_sources.RAW_THREAD),
    "expanded-output": (RELU, guard_sources.EXPANDED_OUTPUT),
    "meta-output": (RELU, guard_sources.META_OUTPUT),
    "lazy-subclass": (SOFTMAX, CORPUS / "cpu" / "c04b_lazy_subclass.py"),
    "stale-output": (RELU, CORPUS / "cpu" / "c01_stale_output.py"),
    "tf32-flag": (RELU, CORPUS / "cpu" / "c11b_tf32_flag.py"),
    "backend-switches": (SOFTMAX, CORPUS / "cpu" / "c17_slow_baseline.py"),
    "flag-flipped-when-timed": (RELU, guard_sources.FLAG_FLIPPED_WHEN_TIMED),
    "skips-work-when-repeated": (RELU, guard_sources.SKIPS_WORK_WHEN_REPEATED),
    "address-cache": (RELU, guard_sources.ADDRESS_CACHE),
    "data-ptr-cache": (RELU, CORPUS / "cpu" / "c08_result_cache.py"),
    "call-counter": (RELU, CORPUS / "cpu" / "c09_phase_detect.py"),
    "softmax-five-percent-high": (SOFTMAX, guard_sources.SOFTMAX_FIVE_PERCENT_HIGH),
    "softmax-torch": (SOFTMAX, guard_sources.SOFTMAX_TORCH),
    "relu-torch": (RELU, guard_sources.RELU_TORCH),
    "relu-torch-permissive": (RELU, guard_sources.RELU_TORCH),
    "relu-jit-scripted": (RELU, guard_sources.RELU_JIT_SCRIPTED),
    "relu-jit-scripted-kernelbench": (RELU, guard_sources.RELU_JIT_SCRIPTED),
    "relu-torch-wrong-shape-kernelbench": (RELU, guard_sources.RELU_TORCH_WRONG_SHAPE),
}
#: The guard each case runs under where it is not PYTORCH.
GUARDS = {
    "relu-torch-permissive": PERMISSIVE,
    "relu-jit-scripted-kernelbench": {"policy": "kernelbench"},
    "relu-torch-wrong-shape-kernelbench": {"policy": "kernelbench"},
}
CEILINGS = {"bandwidth_bytes_per_s": 1e9, "peak_flops_per_s": 1e12}


@pytest.fixture(scope="module")
def runs(tmp_path_factory, build_dir):
    root = tmp_path_factory.mktemp("guard-dynamic")
    jobs = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for name, (problem, candidate) in CASES.items():
            if isinstance(candidate, str):
                path = root / f"{name}.py"
                path.write_text(candidate)
                candidate = path
            extra = {"ceilings": CEILINGS} if name == "relu-torch" else {}
            jobs[name] = pool.submit(
                evaluate,
                problem,
                candidate,
                root / name,
                build_dir,
                guard=GUARDS.get(name, PYTORCH),
                perf_trials=8,
                sample_calls=[1, 4, 6],
                **extra,
            )
        return {name: job.result() for name, job in jobs.items()}


def failure(runs, name: str) -> dict:
    return runs[name].failures["candidate"]


@pytest.mark.parametrize(
    "name, stage, text",
    [
        ("lingering-thread", "correctness", "Python thread(s) running (kforge-late-fill)"),
        ("raw-thread", "correctness", "OS threads after the call"),
        ("expanded-output", "correctness", "storage holds 256 bytes"),
        ("meta-output", "correctness", "meta device"),
        ("lazy-subclass", "correctness", "LazySoftmax, a torch.Tensor subclass"),
    ],
)
def test_deferred_work(runs, name, stage, text):
    found = failure(runs, name)
    assert (found["stage"], found["kind"], found["check"]) == (stage, "rejected", "deferred-work")
    assert text in found["message"]


def test_stale_output_is_found_at_run_time(runs):
    found = failure(runs, "stale-output")
    assert (found["kind"], found["check"]) == ("rejected", "stale-output")
    assert "never written" in found["message"]


@pytest.mark.parametrize(
    "name, stage, check, flag",
    [
        ("tf32-flag", "build", "precision", "torch.backends.cuda.matmul.allow_tf32 changed from False to True"),
        ("backend-switches", "build", "global-state", "torch.backends.mkldnn.enabled changed from True to False"),
        ("flag-flipped-when-timed", "timing", "global-state", "torch.backends.cudnn.benchmark changed"),
    ],
)
def test_global_state_changes_are_rejected(runs, name, stage, check, flag):
    found = failure(runs, name)
    assert (found["stage"], found["kind"], found["check"]) == (stage, "rejected", check)
    assert flag in found["message"]


def test_skipping_work_in_repeated_calls_leaves_poison(runs):
    found = failure(runs, "skips-work-when-repeated")
    assert (found["stage"], found["check"]) == ("timing", "stale-output")
    assert runs["skips-work-when-repeated"].judgement["passed"] is True


@pytest.mark.parametrize("name", ["address-cache", "data-ptr-cache", "call-counter"])
def test_result_caches_and_phase_detection_fail_the_timed_outputs(runs, name):
    result = runs[name]
    assert result.judgement["passed"] is True, result.judgement
    assert verdict(result) == ("rejected", "timed-output"), result.timed_judgement
    failed = [trial for trial in result.timed_judgement["trials"] if not trial["passed"]]
    assert failed and all(trial["check"] == "mismatch" for trial in failed)


def test_timed_calls_refill_inputs_in_place_with_new_contents(runs):
    result = runs["relu-torch"]
    samples = result.timing["samples"]
    assert [(sample["call"], sample["seed"]) for sample in samples] == [(1, 22), (4, 21), (6, 21)]
    assert len({sample["input_seed"] for sample in samples}) == 3
    assert all(sample["input_seed"] != sample["seed"] for sample in samples)
    assert result.timed_judgement["passed"] is True
    assert [trial["input_mutated"] for trial in result.timed_judgement["trials"]] == [
        False
    ] * 6  # 3 timed, 3 batch outputs
    kept = samples + [sample for batch in result.batches for sample in batch.samples]
    assert [trial["input_seed"] for trial in result.timed_judgement["trials"]] == [s["input_seed"] for s in kept]


def test_scale_aware_mismatch_is_incorrect_not_rejected(runs):
    result = runs["softmax-five-percent-high"]
    assert result.judgement["degenerate"] is True
    trial = result.judgement["trials"][0]
    assert trial["mismatch_count"] == 0 and trial["check"] == "scale-aware-mismatch"
    assert trial["scale_aware"]["relative_l2_error"] == pytest.approx(0.05, rel=1e-3)
    assert verdict(result) == ("incorrect", "scale-aware-mismatch")


def test_a_correct_softmax_passes_the_scale_aware_metric(runs):
    result = runs["softmax-torch"]
    assert verdict(result) == ("correct", None)
    trial = result.judgement["trials"][0]
    assert trial["scale_aware"]["passed"] is True and trial["scale_aware"]["relative_l2_error"] < 1e-6
    audit = result.message("reference", "audit")
    # Two correctness seeds: the second's trial is the stressed one (problem/stress.py), which the
    # audit of the problem's own inputs leaves out.
    assert audit["degenerate"] is True and audit["passing"] == ["zeros", "mean"] and audit["trials"] == 1


def test_guard_checks_report_what_ran(runs):
    result = runs["relu-torch"]
    reports = {
        message["stage"]: {entry["check"]: entry["status"] for entry in message["checks"]}
        for message in result.candidate.of_type("guard-checks")
    }
    assert reports["correctness"]["stale-output"] == "passed"
    assert reports["correctness"]["deferred-work"] == "passed"
    assert reports["timing"]["global-state"] == "passed" and reports["timing"]["precision"] == "passed"
    assert reports["timing"]["side-stream"] == "skipped" and reports["timing"]["l2-persist"] == "skipped"


@pytest.mark.parametrize(
    "name, operator",
    [("relu-torch", "aten::relu ×1"), ("softmax-torch", "aten::_softmax ×1"), ("address-cache", "aten::relu ×1")],
)
def test_torch_compute_under_the_pytorch_policy_is_a_note(runs, name, operator):
    result = runs[name]
    checks = {entry["check"]: entry for entry in result.message("candidate", "guard-checks")["checks"]}
    assert checks["torch-fallback"]["status"] == "note"
    assert checks["torch-fallback"]["message"].startswith("correctness trial 0 (seed 11): forward dispatched ")
    assert (
        operator in checks["torch-fallback"]["message"]
        and "allowed and reported" in checks["torch-fallback"]["message"]
    )
    assert verdict(result)[0] in ("correct", "rejected")  # the note decides nothing


def test_a_pytorch_program_is_rejected_under_permissive_and_correct_under_pytorch(runs):
    """docs/spec.md section 8: under every policy but `pytorch` a candidate whose own code did not do the
    work is rejected; `permissive` only waives the rejections for PyTorch use beside its own kernel."""
    assert verdict(runs["relu-torch"]) == ("correct", None)
    result = runs["relu-torch-permissive"]
    assert result.message("candidate", "guard")["policy"] == "permissive"
    assert all(finding["severity"] == "note" for finding in result.message("candidate", "guard")["findings"])
    assert verdict(result) == ("rejected", "torch-fallback"), result.failures
    found = failure(runs, "relu-torch-permissive")
    assert found["stage"] == "correctness"
    assert found["message"] == (
        "correctness trial 0 (seed 11): the output is PyTorch's own computation from the "
        "inputs (aten::relu) and no code of the candidate's changed it: no kernel of its own "
        "did the work; compute the result in your kernel (the guard policy `pytorch` would measure it "
        "as a PyTorch program, no kernel of its own required)"
    )
    # The traced call's output was judged before the rejection was sent: it is right.
    assert runs["relu-torch-permissive"].handed["correctness-0"]["passed"] is True
    checks = {entry["check"]: entry for entry in runs["relu-torch"].message("candidate", "guard-checks")["checks"]}
    assert checks["torch-fallback"]["status"] == "note"
    assert checks["torch-fallback"]["message"].startswith(
        "correctness trial 0 (seed 11): forward dispatched aten::relu ×1"
    )
    assert (
        "; correctness trial 0 (seed 11): the output is PyTorch's own computation from the inputs (aten::relu) and "
        "no code of the candidate's changed it: no kernel of its own did the work; compute the result in your "
        "kernel (recorded only: the policy `pytorch` does not reject it)"
    ) in checks["torch-fallback"]["message"]
    assert checks["torch-fallback"]["message"].endswith(
        "forward handed the work to PyTorch (aten::relu): its kernel is PyTorch; write the kernel (recorded only: "
        "the policy `pytorch` does not reject it)"
    )


def test_a_wrong_answer_is_said_before_the_policys_rejection_of_what_ran(runs):
    """A plain PyTorch program with the wrong shape under `kernelbench`: the policy rejects what ran
    (`torch-fallback`, naming `pytorch` as the policy that would measure it), but only after the
    traced call's output was handed to the judge, which finds the wrong shape: the parent says
    `incorrect` (shape) first (docs/worker-protocol.md, "Verdicts from the guard")."""
    result = runs["relu-torch-wrong-shape-kernelbench"]
    found = failure(runs, "relu-torch-wrong-shape-kernelbench")
    assert (found["stage"], found["kind"], found["check"]) == ("correctness", "rejected", "torch-fallback")
    assert found["message"].endswith(
        "(the guard policy `pytorch` would measure it as a PyTorch program, no kernel of its own required)"
    )
    handed = result.handed["correctness-0"]
    assert (handed["passed"], handed["check"]) == (False, "shape"), handed
    assert "(8, 10)" in handed["message"] and "(8, 64)" in handed["message"]
    assert list(result.handed) == ["correctness-0"], "no trial runs after the rejection"
    assert verdict(result) == ("incorrect", "shape")


def test_roofline_bound_from_the_requested_ceilings(runs):
    roofline = runs["relu-torch"].message("reference", "roofline")
    assert roofline["bytes"] == 2 * 8 * 64 * 4 and roofline["flops"] == 0 and roofline["seed"] == 11
    assert roofline["lower_bound_ms"] == pytest.approx(4096 / 1e9 * 1e3)
    assert runs["softmax-torch"].message("reference", "roofline")["lower_bound_ms"] is None


def test_a_jit_scripted_forward_is_judged_by_what_it_dispatched(runs):
    """torch.jit (and torch.compile, on a torch that has it) is only a static note: the scripted
    graph's operators reach the dispatch trace, so a forward whose work only they do is PyTorch's
    work, rejected under every policy but `pytorch`."""
    result = runs["relu-jit-scripted-kernelbench"]
    guard = result.message("candidate", "guard")
    assert guard["policy"] == "kernelbench"
    compiled = [finding for finding in guard["findings"] if "torch.jit.script" in finding["message"]]
    assert compiled and all(finding["severity"] == "note" for finding in compiled)
    assert verdict(result) == ("rejected", "torch-fallback"), result.failures
    found = failure(runs, "relu-jit-scripted-kernelbench")
    assert found["stage"] == "correctness" and "(aten::relu)" in found["message"]
    assert verdict(runs["relu-jit-scripted"]) == ("correct", None)
    checks = {
        entry["check"]: entry for entry in runs["relu-jit-scripted"].message("candidate", "guard-checks")["checks"]
    }
    assert "aten::relu ×1" in checks["torch-fallback"]["message"]
