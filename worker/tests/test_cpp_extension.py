"""Real C++ builds through load_inline (about 45 s each here): one that fails, one that works.

Both evaluations run side by side, sharing the session's TORCH_EXTENSIONS_DIR.
"""

from concurrent.futures import ThreadPoolExecutor

import pytest

import sources
from worker_process import evaluate


@pytest.fixture(scope="module")
def builds(tmp_path_factory, build_dir):
    root = tmp_path_factory.mktemp("cpp")
    problem = root / "add.py"
    problem.write_text(sources.ADD_PROBLEM)
    jobs = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for name, source in (("correct", sources.CPP_ADD_CORRECT), ("broken", sources.CPP_ADD_BROKEN)):
            candidate = root / f"{name}.py"
            candidate.write_text(source)
            jobs[name] = pool.submit(
                evaluate, problem, candidate, root / name, build_dir, perf_trials=4, warmup_trials=1, sample_calls=[2]
            )
        return {name: job.result() for name, job in jobs.items()}


def test_failing_build_is_a_compile_error_with_the_compiler_output(builds):
    failure = builds["broken"].failures["candidate"]
    assert (failure["stage"], failure["kind"], failure["check"]) == ("build", "compile_error", "build")
    assert "kforge_function_that_does_not_exist" in failure["compiler_output"]
    assert "was not declared" in failure["compiler_output"]
    assert failure["message"].startswith("the extension did not build: ")
    assert "kforge_function_that_does_not_exist" in failure["message"]
    assert builds["broken"].exit_codes["candidate"] == 0


def test_working_build_is_correct_and_timed(builds, build_dir):
    result = builds["correct"]
    assert result.failures == {}, result.candidate.stderr
    assert result.judgement["passed"] is True
    assert all(trial["max_abs_error"] == 0.0 for trial in result.judgement["trials"])
    assert len(result.timing["times_ms"]) == 4
    assert result.timed_judgement["passed"] is True
    assert list(build_dir.glob("kforge_test_add*/*.so"))
    assert "ninja" not in result.candidate.stdout.lower()
