"""The adversarial corpus (tests/adversarial) end to end: every cpu case through both worker
processes under the worker's default guard, judged by the parent's rules (verdicts.py).

Each cheat must end with the manifest's verdict and check; each honest look-alike must be correct,
with its sampled timed outputs passing too. Static cheats must be rejected by the `guard` message's
first reject finding; dynamic ones must pass static analysis and be caught at run time. Cases run
two at a time; the two native honest cases (h06b, h06c) and the native run-time cheat (c06d) are
the only C++ builds here (c06b is rejected before it builds), in the session's shared build
directory. A case that `needs` a capability this torch lacks (c06e: a profiler that records every
thread, torch 2.x) is skipped and not run.
"""

import json
import statistics
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kforge_worker.guard.kernel_trace import all_threads_config
from kforge_worker.guard.policy import DEFAULT_POLICY, POLICY_NAMES
from native_exceptions import platform_crash
from verdicts import batch_per_call, generalisation_failures, reported_figure, substituted_ops, verdict
from worker_process import evaluate

pytestmark = pytest.mark.e2e

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "adversarial"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
CPU_CASES = [case for case in MANIFEST["cases"] if case["backend"] == "cpu"]
#: Why each capability a case may `need` is missing here (None: present).
MISSING = {"profiler-all-threads": all_threads_config()[1]}
GATED = [case for case in CPU_CASES if case.get("gate") == "generalisation"]
GATE_GUARD = {"policy": "kernelbench", "gate_specialisation": True}
#: Cases with a verdict per policy, each run once more under every shipped policy but the default.
POLICY_CASES = [case for case in CPU_CASES if "policies" in case]
OTHER_POLICIES = tuple(name for name in POLICY_NAMES if name != DEFAULT_POLICY)
POLICY_RUNS = [(case, policy) for case in POLICY_CASES for policy in OTHER_POLICIES]
#: Cases whose verdict holds under another tolerance profile than the default (c11: `strict`), each
#: run once more under it; the values are the profile's for an fp32 output (src/eval/run/tolerance.ts).
TOLERANCE_CASES = [case for case in CPU_CASES if "tolerance" in case]
TOLERANCES = {"strict": 1e-4}


def _run(case: dict, root: Path, build_dir: Path, guard=None, tolerance=None):
    name = (
        Path(case["file"]).stem
        + ("-" + guard["policy"] if guard else "")
        + ("-gated" if guard and guard.get("gate_specialisation") else "")
        + ("-" + tolerance if tolerance else "")
    )
    limits = {"atol": TOLERANCES[tolerance], "rtol": TOLERANCES[tolerance]} if tolerance else {}
    return evaluate(CORPUS / case["problem"], CORPUS / case["file"], root / name, build_dir, guard=guard, **limits)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, build_dir):
    root = tmp_path_factory.mktemp("adversarial")
    jobs = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for case in CPU_CASES:
            if _missing(case) is None:
                jobs[case["file"]] = pool.submit(_run, case, root, build_dir)
        for case in GATED + [case for case in CPU_CASES if case["file"] == "cpu/h13_fast_path.py"]:
            jobs[case["file"] + "#gated"] = pool.submit(_run, case, root, build_dir, GATE_GUARD)
        for case, policy in POLICY_RUNS:
            jobs[f"{case['file']}#{policy}"] = pool.submit(_run, case, root, build_dir, {"policy": policy})
        for case in TOLERANCE_CASES:
            jobs[f"{case['file']}#{case['tolerance']}"] = pool.submit(
                _run, case, root, build_dir, tolerance=case["tolerance"]
            )
        return {key: job.result() for key, job in jobs.items()}


def _missing(case: dict):
    """Why this torch cannot run the case (its `needs`), or None."""
    return MISSING[case["needs"]] if "needs" in case else None


def _expected(case: dict):
    verdict_name = case.get("default_verdict", case["expected_verdict"])
    check = case["expected_check"] if verdict_name == case["expected_verdict"] else None
    return verdict_name, check


def _static_rejects(result) -> list:
    guard = result.message("candidate", "guard")
    assert guard is not None and guard["policy"] == "kernelbench", result.candidate.messages[:4]
    return [finding["check"] for finding in guard["findings"] if finding["severity"] == "reject"]


@pytest.mark.parametrize("case", CPU_CASES, ids=[case["file"] for case in CPU_CASES])
def test_case_ends_with_its_verdict(runs, case):
    if _missing(case) is not None:
        pytest.skip(f"{case['file']} needs {case['needs']}: {_missing(case)}")
    result = runs[case["file"]]
    if why := platform_crash(case, result):
        pytest.skip(why)
    expected = _expected(case)
    assert verdict(result) == expected, (
        result.failures,
        result.judgement,
        result.timed_judgement,
        result.violation,
        result.candidate.stderr[-2000:],
    )
    assert result.exit_codes["reference"] == 0
    assert result.exit_codes["candidate"] == (0 if result.violation is None else -9), result.exit_codes
    rejects = _static_rejects(result)
    if case["detected_by"] == "static":
        assert rejects and rejects[0] == case["expected_check"]
        assert result.failures["candidate"]["stage"] == "build"
    else:
        assert rejects == [], rejects
    if expected[0] == "correct":
        assert result.timed_judgement is not None and result.timed_judgement["passed"] is True


@pytest.mark.parametrize(
    "case",
    [case for case in CPU_CASES if case["static_notes"]],
    ids=[case["file"] for case in CPU_CASES if case["static_notes"]],
)
def test_static_notes_are_reported(runs, case):
    if _missing(case) is not None:
        pytest.skip(f"{case['file']} needs {case['needs']}: {_missing(case)}")
    guard = runs[case["file"]].message("candidate", "guard")
    notes = {finding["check"] for finding in guard["findings"] if finding["severity"] == "note"}
    assert set(case["static_notes"]) <= notes


@pytest.mark.parametrize("case", GATED, ids=[case["file"] for case in GATED])
def test_gated_case_is_rejected_when_the_gate_is_on(runs, case):
    result = runs[case["file"] + "#gated"]
    assert verdict(result, gate_specialisation=True) == (case["expected_verdict"], case["expected_check"])
    entries = result.correctness["generalisation"]
    assert [entry["variant"] for entry in entries] == [{"batch_size": 16}, {"batch_size": 4}]
    assert generalisation_failures(result)
    ungated = runs[case["file"]]
    assert ungated.correctness["generalisation"] == []


@pytest.mark.parametrize("case", TOLERANCE_CASES, ids=[case["file"] for case in TOLERANCE_CASES])
def test_case_ends_with_its_verdict_under_its_tolerance(runs, case):
    """c11: float16 rounding in an fp32 run is correct under kernelbench's 1e-2 (the default run,
    above) and incorrect as `precision-loss` under strict's 1e-4, judged by its measured error."""
    result = runs[f"{case['file']}#{case['tolerance']}"]
    assert verdict(result) == (case["expected_verdict"], case["expected_check"]), result.judgement
    assert _static_rejects(result) == []
    default = runs[case["file"]]
    assert all(trial["fp64_max_abs_error"] > 0 for trial in default.judgement["trials"]), "the loss is reported"


def test_honest_fast_path_passes_the_generalisation_gate(runs):
    result = runs["cpu/h13_fast_path.py#gated"]
    assert verdict(result, gate_specialisation=True) == ("correct", None)
    assert result.generalisation_judgement["passed"] is True
    assert [trial["variant"] for trial in result.generalisation_judgement["trials"]] == [
        {"batch_size": 16},
        {"batch_size": 4},
    ]


FIGURE_CASES = [case for case in CPU_CASES if "figure" in case]
FORGED_SHRINK = 100.0


@pytest.mark.parametrize("case", FIGURE_CASES, ids=[case["file"] for case in FIGURE_CASES])
def test_a_forged_clock_gains_nothing_and_an_honest_one_keeps_its_figure(runs, case):
    """docs/timing.md, P1: the cases that forge every clock of their process (c05e, c05f) are
    reported at the parent's own figure, not at their 100-fold shrunk one; the honest look-alike
    keeps its own. The yardstick is the `twin`, an honest case with the same kernel (the Python
    relu of h05b, the C++ relu of h06b)."""
    result = runs[case["file"]]
    reported, source = reported_figure(result)
    in_process = statistics.median(result.timing["times_ms"])
    if case["figure"] == "own":
        assert (reported, source) == (in_process, "in-process")
        return
    honest_source = reported_figure(runs[case["twin"]])[1]
    assert honest_source == "in-process"
    assert source == "trusted-batch", (in_process, result.batches)
    # A batch's calls legitimately run faster than single timed calls (no per-call synchronize or
    # flush): 4.4 to 4.9 times in full-suite runs of 2026-12-06 and 12-07, so the reported figure is
    # held to a tenth of the real time, still ten times the forged figure, and is compared with the
    # twin's own batches, measured the same way.
    assert in_process * FORGED_SHRINK / 10 < reported, "the forgery took effect in the candidate's process"
    twin_batches = batch_per_call(runs[case["twin"]])
    assert twin_batches, "the honest twin ran no trusted batches"
    honest_batch = statistics.median(twin_batches)
    assert (
        reported > honest_batch / 4
    ), f"{reported} ms reported against {honest_batch} ms for the honest relu's batches"


def test_value_keyed_cache_never_sees_the_same_contents_twice(runs):
    result = runs["cpu/c16_impossibly_fast.py"]
    timing = result.timing
    assert timing["contents_per_model"] >= 4  # (2 warm-up + 6 timed calls) / 2 models
    seeds = [sample["input_seed"] for sample in timing["samples"]]
    assert len(set(seeds)) == len(seeds) and result.timed_judgement["passed"] is True


@pytest.mark.parametrize("case, policy", POLICY_RUNS, ids=[f"{case['file']}#{policy}" for case, policy in POLICY_RUNS])
def test_case_ends_with_its_verdict_under_each_policy(runs, case, policy):
    result = runs[f"{case['file']}#{policy}"]
    if why := platform_crash(case, result):
        pytest.skip(why)
    expected = case["policies"][policy]
    assert verdict(result) == (expected["verdict"], expected["check"]), (
        result.failures,
        result.message("candidate", "attribution"),
        result.candidate.stderr[-2000:],
    )
    assert result.message("candidate", "guard")["policy"] == policy
    assert result.exit_codes == {"reference": 0, "candidate": 0}


@pytest.mark.parametrize(
    "case",
    [case for case in MANIFEST["cases"] if "policies" in case],
    ids=[case["file"] for case in MANIFEST["cases"] if "policies" in case],
)
def test_a_policy_case_gives_its_verdict_under_every_shipped_policy(case):
    assert list(case["policies"]) == list(POLICY_NAMES)


@pytest.mark.parametrize("case", POLICY_CASES, ids=[case["file"] for case in POLICY_CASES])
def test_the_default_policy_is_the_manifests_kernelbench_entry(case):
    expected = case["policies"]["kernelbench"]
    assert _expected(case) == (expected["verdict"], expected["check"])


def _attribution(result) -> dict:
    message = result.message("candidate", "attribution")
    assert message is not None, result.candidate.messages
    return message


@pytest.mark.parametrize(
    "key", [case["file"] for case in POLICY_CASES] + [f"{case['file']}#{policy}" for case, policy in POLICY_RUNS]
)
def test_every_traced_call_sends_its_attribution(runs, key):
    case = next(case for case in POLICY_CASES if case["file"] == key.split("#")[0])
    if why := platform_crash(case, runs[key]):
        pytest.skip(why)
    attribution = _attribution(runs[key])
    assert attribution["measured"] == "host" and attribution["unavailable"] is None
    origin = attribution["by_origin_ms"]
    assert origin["library"] == 0 and sum(origin.values()) > 0
    assert attribution["own_share"] == pytest.approx(origin["own"] / sum(origin.values()), abs=1e-5)
    # Every case's kernel does work, except c07c's, which raises (a call that raised is not own work).
    assert (origin["own"] > 0) is (not key.startswith("cpu/c07c_fallback_runs.py")), attribution


def test_a_kept_gemm_is_reported_as_the_references_own_operator(runs):
    result = runs["cpu/h06f_kept_gemm_epilogue.py"]
    ops = {entry["op"] for entry in _attribution(result)["torch_ops"]}
    assert ops & {"aten::mm", "aten::addmm"}, ops
    assert substituted_ops(result) == []
    reference = {entry["op"] for entry in result.message("reference", "reference-ops")["ops"]}
    assert "aten::gelu" in reference


def test_an_aten_reduction_inside_the_extension_is_reported_as_such(runs):
    entries = {
        entry["op"]: entry for entry in _attribution(runs["cpu/h06g_aten_reduction_in_extension.py"])["torch_ops"]
    }
    assert entries["aten::mean.dim"]["inside_extension"] == 1


def test_a_substituted_operator_is_named_under_kernelbench(runs):
    result = runs["cpu/c06f_substituted_op.py"]
    assert substituted_ops(result) == ["aten::_softmax"]
    assert verdict(result) == ("correct", None)
