"""KFORGE_WORKER_PROFILE: a role's sampling profile, written where a person asked, unseen by problem code."""

from worker_process import Worker, reference_request

PROBLEM_THAT_LOOKS_FOR_THE_VARIABLE = """
import os
import time

import torch

if "KFORGE_WORKER_PROFILE" in os.environ:
    raise RuntimeError("the profile variable reached problem code")


class Model(torch.nn.Module):
    def forward(self, x):
        time.sleep(0.05)  # so that the sampler sees the reference stage
        return torch.relu(x)


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
"""


def _serve_reference(problem, cwd, env=None) -> Worker:
    """Runs the reference role on `problem` to its end; the finished worker (for its stderr)."""
    worker = Worker("reference", cwd, env=env)
    try:
        worker.send(reference_request(problem))
        assert worker.read_until("reference-ready")["type"] == "reference-ready", worker.stderr
        worker.close_stdin()
        assert worker.finish() == 0
    finally:
        worker.kill()
    return worker


def test_the_reference_role_writes_its_profile_and_hides_the_variable(tmp_path):
    problem = tmp_path / "relu.py"
    problem.write_text(PROBLEM_THAT_LOOKS_FOR_THE_VARIABLE)
    profiles = tmp_path / "profiles"
    _serve_reference(problem, tmp_path / "reference", env={"KFORGE_WORKER_PROFILE": str(profiles)})
    stacks = list(profiles.glob("reference-*.stacks"))
    summaries = list(profiles.glob("reference-*.summary.txt"))
    assert len(stacks) == 1 and len(summaries) == 1
    lines = stacks[0].read_text().splitlines()
    assert lines and all(line.rsplit(" ", 1)[1].isdigit() for line in lines)
    assert any(line.startswith("reference;") and "run_reference" in line for line in lines)
    summary = summaries[0].read_text()
    assert "  reference: " in summary and "== reference:" in summary


def test_without_the_variable_no_profile_is_written(tmp_path):
    problem = tmp_path / "relu.py"
    problem.write_text(PROBLEM_THAT_LOOKS_FOR_THE_VARIABLE.replace('"KFORGE_WORKER_PROFILE" in os.environ', "False"))
    _serve_reference(problem, tmp_path / "reference")
    assert not list(tmp_path.glob("**/*.stacks"))


def test_a_profile_folder_the_worker_cannot_write_falls_back_to_its_temporary_folder(tmp_path):
    problem = tmp_path / "relu.py"
    problem.write_text(PROBLEM_THAT_LOOKS_FOR_THE_VARIABLE)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    own_temporary = tmp_path / "worker-tmp"
    own_temporary.mkdir()
    worker = _serve_reference(
        problem,
        tmp_path / "reference",
        env={"KFORGE_WORKER_PROFILE": str(blocker / "profiles"), "TMPDIR": str(own_temporary)},
    )
    assert len(list((own_temporary / "kforge-profile").glob("reference-*.stacks"))) == 1
    assert f"{blocker / 'profiles'} cannot be written" in worker.stderr
    assert str(own_temporary / "kforge-profile") in worker.stderr
