"""A problem's module constants, what `--set` may override and what is named to a person: upper-case
names (KernelBench's `N`, `M`, `K`) included, private names and kforge's own declarations left out;
and `python3 -m kforge_worker constants`, which reads them without importing torch."""

import json
import os
import subprocess
import sys

import pytest

from kforge_worker.problem.problem_loader import load_problem
from kforge_worker.roles.size_estimate import size_constants
from kforge_worker.protocol.errors import StageFailure
from worker_process import WORKER_ROOT

MATMUL = """
import torch

N = 64
M = K = 32
_scratch = 3
KFORGE_PRESETS = {"cpu": {"N": 16}}

class Model(torch.nn.Module):
    def forward(self, a, b):
        return a @ b

def get_inputs():
    return [torch.randn(N, K), torch.randn(K, M)]

def get_init_inputs():
    return []
"""


def test_an_upper_case_constant_is_overridden_and_what_follows_from_it_too(tmp_path):
    problem = tmp_path / "matmul.py"
    problem.write_text(MATMUL)
    module = load_problem(str(problem), None, {"N": 8, "K": 4})
    assert (module.N, module.M, module.K) == (8, 32, 4)
    assert [tuple(tensor.shape) for tensor in module.get_inputs()] == [(8, 4), (4, 32)]


def test_a_missing_name_lists_the_upper_case_constants_but_not_private_or_kforge_ones(tmp_path):
    problem = tmp_path / "matmul.py"
    problem.write_text(MATMUL)
    with pytest.raises(StageFailure) as raised:
        load_problem(str(problem), None, {"batch_size": 2})
    assert (raised.value.kind, raised.value.check) == ("invalid_input", "problem-override")
    assert raised.value.message.endswith("(its constants: N, M, K)"), raised.value.message


def test_the_size_estimate_lists_upper_case_integer_constants(tmp_path):
    problem = tmp_path / "matmul.py"
    problem.write_text(MATMUL)
    assert size_constants(load_problem(str(problem), None)) == {"N": 64, "M": 32, "K": 32}


def constants(*paths: str, environment=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kforge_worker", "constants", *paths],
        cwd=WORKER_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=environment,
    )


def test_the_constants_command_reads_each_file_without_importing_torch(tmp_path):
    problem = tmp_path / "matmul.py"
    problem.write_text(MATMUL)
    broken = tmp_path / "broken.py"
    broken.write_text("N = (\n")
    # A `torch` that fails on import, first on the path: the command must never reach it.
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('the constants command imported torch')\n")
    environment = {**os.environ, "PYTHONPATH": f"{fake.parent}{os.pathsep}{WORKER_ROOT}"}
    completed = constants(str(problem), str(broken), str(tmp_path / "absent.py"), environment=environment)
    assert completed.returncode == 0, completed.stderr
    matmul, unparsable, absent = json.loads(completed.stdout)["problems"]
    assert matmul == {
        "problem": str(problem),
        "assigned": ["N", "M", "K", "_scratch", "KFORGE_PRESETS"],
        "constants": ["N", "M", "K"],
    }
    assert unparsable["problem"] == str(broken) and "is not Python that parses" in unparsable["error"]
    assert "cannot be read: No such file or directory" in absent["error"]


def test_the_constants_command_without_a_problem_is_misuse():
    completed = constants()
    assert completed.returncode == 2
    assert "usage: python3 -m kforge_worker constants PROBLEM" in completed.stderr
