"""The reference store: which records carry the float64 twin of the error profile."""

import torch

from kforge_worker.problem.problem_loader import load_problem
from kforge_worker.roles.reference_store import ReferenceStore

PROBLEM = """
import torch

batch_size = 4
dim = 8


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.tanh(x) * 3


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
"""


def _store(tmp_path, **options):
    path = tmp_path / "problem.py"
    path.write_text(PROBLEM)
    return ReferenceStore(load_problem(str(path), None), torch.device("cpu"), None, **options)


def test_only_the_error_profiles_records_carry_the_float64_twin(tmp_path):
    store = _store(tmp_path, profile_seeds=[1, 2])
    correctness = store.compute(1)
    assert correctness.output_fp64 is not None
    assert correctness.output_fp64.leaves[0].dtype == torch.float64
    assert torch.allclose(correctness.output_fp64.leaves[0].float(), correctness.output.leaves[0], atol=1e-6)
    assert store.compute(7).output_fp64 is None, "a timing seed's record is judged in the run's precision"
    assert store.compute(1, input_seed=99).output_fp64 is None, "so is a timed call's (input seed != seed)"
    assert store.compute(7, variant={"batch_size": 3}).output_fp64 is not None, "a generalisation trial's has it"


def test_without_profile_seeds_every_record_has_it(tmp_path):
    store = _store(tmp_path)
    assert store.compute(7, input_seed=99).output_fp64 is not None


SLOW_PROBLEM = """
import time
import torch

batch_size = 4


class Model(torch.nn.Module):
    def forward(self, x):
        time.sleep(0.2)
        return x * 2


def get_inputs():
    time.sleep(0.1)
    return [torch.randn(batch_size, 8)]


def get_init_inputs():
    return []
"""


def test_a_records_time_in_the_runs_precision_is_measured_without_its_float64_twin(tmp_path):
    """`trial_ms` (inputs drawn to the forward's return) and `forward_ms` size the candidate's stage
    limits (docs/sizes.md): the twin, which the candidate never runs, is left out."""
    path = tmp_path / "slow.py"
    path.write_text(SLOW_PROBLEM)
    store = ReferenceStore(load_problem(str(path), None), torch.device("cpu"), None, profile_seeds=[1])
    assert store.duration(1) == {}
    record = store.compute(1)
    assert record.output_fp64 is not None, "the twin ran (another 0.3 s of inputs and forward)"
    duration = store.duration(1)
    assert 200 <= duration["forward_ms"] < 300
    assert 300 <= duration["trial_ms"] < 550
