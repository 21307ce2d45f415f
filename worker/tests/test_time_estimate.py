"""The time estimate: the reference's pace measured at small sizes, an evaluation's seconds at
others, and the sizes that fit a time budget (docs/sizes.md, "Sizing by time")."""

import json
import subprocess
import sys

import pytest

from kforge_worker.roles.time_estimate import (
    EVALUATION_PROBES,
    FIXED_S,
    KEPT_PROBES,
    Pace,
    estimate_time,
    evaluation_seconds,
)
from kforge_worker.roles.reference_store import KEEP_BYTES

#: Its forward sleeps 5 ms per batch row; the reference's twin runs it again: a probe takes about
#: 10 ms per row, and the whole batch fits the first probe (the inputs are tiny).
LINEAR = """
import time
import torch

batch_size = 64


class Model(torch.nn.Module):
    def forward(self, x):
        time.sleep(0.005 * x.shape[0])
        return x + 1


def get_inputs():
    return [torch.zeros(batch_size, 4)]


def get_init_inputs():
    return []
"""

#: 2 MiB of input a row, so the first probe is made at 4 rows (under 16 MiB of inputs and output) and
#: doubled; the forward sleeps 4 ms times the rows squared (the side of a square matrix, say).
SQUARE = """
import time
import torch

batch_size = 64


class Model(torch.nn.Module):
    def forward(self, x):
        time.sleep(0.004 * x.shape[0] ** 2)
        return x[:, :1]


def get_inputs():
    return [torch.zeros(batch_size, 512 * 1024)]


def get_init_inputs():
    return []
"""


def _problem(tmp_path, source: str) -> str:
    path = tmp_path / "problem.py"
    path.write_text(source)
    return str(path)


def test_an_evaluation_is_a_fixed_start_and_its_probes_fewer_where_the_judge_keeps_the_references():
    assert evaluation_seconds(2000) == FIXED_S + EVALUATION_PROBES * 2
    assert evaluation_seconds(2000, record_bytes=KEEP_BYTES + 1) == FIXED_S + EVALUATION_PROBES * 2
    assert evaluation_seconds(2000, record_bytes=1024) == FIXED_S + KEPT_PROBES * 2
    # Two of the five kept: three computed again.
    assert evaluation_seconds(2000, record_bytes=KEEP_BYTES // 2) == pytest.approx(
        FIXED_S + (KEPT_PROBES + (EVALUATION_PROBES - KEPT_PROBES) * 3 / 5) * 2
    )


def test_the_pace_follows_the_power_the_last_two_probes_show():
    pace = Pace([(2, 10.0), (4, 100.0), (8, 400.0)])
    assert pace.exponent() == pytest.approx(2.0)
    assert pace.probe_ms(8) == 400.0, "a size probed is its own measure"
    assert pace.probe_ms(64) == pytest.approx(400.0 * 8**2)
    assert Pace([(16, 300.0)]).probe_ms(64) == pytest.approx(1200.0), "one probe: in proportion"
    assert Pace([(2, 1.0), (4, 30.0), (8, 60.0)]).exponent() == 1.0, "a probe under the noise tells nothing"


def test_a_linear_problem_is_timed_and_sized_to_a_budget(tmp_path):
    path = _problem(tmp_path, LINEAR)
    result = estimate_time(path, None, "fp32", {}, budget_s=FIXED_S + 10)
    assert result["error"] is None
    assert result["constant"] == "batch_size"
    assert [probe["value"] for probe in result["probes"]] == [64], "the whole batch is small enough to probe"
    probe_ms = result["probes"][0]["probe_ms"]
    assert 640 <= probe_ms < 1500, probe_ms
    # Its outputs are tiny: the judge keeps every reference.
    assert result["evaluation_s"] == pytest.approx(evaluation_seconds(probe_ms, 1024), abs=0.1)
    assert [size["value"] for size in result["sizes"]] == [64, 32, 16, 8, 4, 2, 1]
    # 10 s of the budget past the fixed part hold a third of a second of probe: 16 rows or fewer.
    fit = result["fit"]
    assert fit is not None and fit["evaluation_s"] <= FIXED_S + 10
    assert fit["overrides"]["batch_size"] == max(
        size["value"] for size in result["sizes"] if size["evaluation_s"] <= FIXED_S + 10
    )
    assert fit["overrides"]["batch_size"] < 64
    refused = estimate_time(path, None, "fp32", {}, budget_s=20, fits_memory=lambda sized: sized["batch_size"] <= 2)
    assert refused["fit"]["overrides"] == {"batch_size": 2}, "the size must fit the memory too"


def test_a_problem_whose_time_grows_faster_is_probed_at_growing_sizes(tmp_path):
    result = estimate_time(_problem(tmp_path, SQUARE), None, "fp32", {}, budget_s=None)
    values = [probe["value"] for probe in result["probes"]]
    assert values[0] == 4 and values == sorted(values) and len(values) >= 2, values
    assert result["probes"][-1]["probe_ms"] >= 500 or values[-1] == 64
    # Square, less what does not grow so (drawing, digesting and comparing the rows, whose share
    # grows on a loaded host: 1.39 in a full-suite run beside the TypeScript suite, 2026-12-07);
    # what matters is that it is told apart from linear growth.
    assert 1.2 <= result["exponent"] <= 2.4, result
    assert result["fit"] is None, "no budget, no fit"


def test_the_command_prints_the_time_beside_the_memory(tmp_path):
    path = _problem(tmp_path, LINEAR)
    printed = subprocess.run(
        [sys.executable, "-m", "kforge_worker", "estimate", path, "--time", "--time-budget-s", "1000"],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(printed.stdout)
    assert result["evaluation_bytes"] > 0
    assert result["time"]["fit"]["overrides"] == {"batch_size": 64}, "its own sizes fit a long budget"
    refused = subprocess.run(
        [sys.executable, "-m", "kforge_worker", "estimate", path, "--time", "--time-budget-s", "-3"],
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2
    assert "expected a positive number of seconds, got '-3'" in refused.stderr


def test_a_problem_that_cannot_be_made_small_is_not_probed_at_its_own_size(tmp_path):
    """Without a size constant the probe would be the problem itself (KernelBench's 4096² matrix
    product, whose upper-case `N` is no constant here, took two minutes a probe): it is not timed."""
    fixed = LINEAR.replace("batch_size = 64\n", "").replace("torch.zeros(batch_size, 4)", "torch.zeros(8, 1024 * 1024)")
    result = estimate_time(_problem(tmp_path, fixed), None, "fp32", {}, budget_s=60)
    assert result["probes"] == [] and result["fit"] is None and result["evaluation_s"] is None
    assert "has no size constant kforge can make smaller" in result["error"]
    assert "too large to time quickly" in result["error"]
