"""Problem folders (problem_folder.py): shapes to module constants, problem.yaml checked, formulas."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kforge_worker.problem.problem_folder import evaluate_formula, folder_of, read_folder
from kforge_worker.protocol.errors import StageFailure

WORKER = Path(__file__).resolve().parents[1]

REFERENCE = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n))

    def forward(self, x):
        return x * self.weight

BATCH = 4
n = 8

def get_inputs():
    return [torch.randn(BATCH, n)]

def get_init_inputs():
    return [n]
"""


def _folder(tmp_path: Path, shapes: str, meta: str = "") -> Path:
    (tmp_path / "reference.py").write_text(REFERENCE)
    (tmp_path / "shapes.py").write_text(shapes)
    if meta:
        (tmp_path / "problem.yaml").write_text(meta)
    return tmp_path


def test_shape_keys_name_constants_exactly_or_by_case_and_others_are_listed_unused(tmp_path):
    folder = _folder(
        tmp_path,
        "SHAPES = [{'batch': 2, 'n': 16}, {'BATCH': 3, 'n': 8, 'extreme': True}]",
        "tolerance:\n  bf16: 0.05\nforbidden: ['torch.topk']\nflops_formula: '2 * batch * n'\n",
    )
    described = read_folder(str(folder)).describe()
    assert [shape["overrides"] for shape in described["shapes"]] == [{"BATCH": 2, "n": 16}, {"BATCH": 3, "n": 8}]
    assert [shape["unused"] for shape in described["shapes"]] == [[], ["extreme"]]
    assert described["tolerance"] == {"bf16": 0.05} and described["forbidden"] == ["torch.topk"]
    assert described["reference"] == str(folder / "reference.py") and described["name"] == folder.name
    # The reference file on its own stands for its folder.
    assert folder_of(str(folder / "reference.py")) == str(folder)
    assert folder_of(str(folder / "shapes.py")) is None


@pytest.mark.parametrize(
    "shapes, meta, words",
    [
        ("SHAPES = []", "", "non-empty list"),
        ("SHAPES = [{'n': 'big'}]", "", "must be a number"),
        ("raise ValueError('no')", "", "raised while loading"),
        ("SHAPES = [{'n': 4}]", "tolerance:\n  int7: 0.1\n", "names no dtype"),
        ("SHAPES = [{'n': 4}]", "forbidden: torch.topk\n", "`forbidden`"),
        ("SHAPES = [{'n': 4}]", "flops_formula: '__import__(\"os\")'\n", "`flops_formula` cannot be used"),
        ("SHAPES = [{'n': 4}]", "bytes_formula: 'n * width'\n", "'width'"),
        ("SHAPES = [{'n': 4}]", "tolerance: [\n", "not valid YAML"),
    ],
)
def test_a_folder_that_cannot_be_used_is_invalid_input_naming_the_file(tmp_path, shapes, meta, words):
    folder = _folder(tmp_path, shapes, meta)
    with pytest.raises(StageFailure) as raised:
        read_folder(str(folder))
    assert raised.value.kind == "invalid_input" and raised.value.check == "problem-load"
    assert words in raised.value.message, raised.value.message


def test_formulas_are_arithmetic_only():
    assert evaluate_formula("2 * M * N * K", {"M": 2, "N": 3, "K": 4}) == 48
    assert evaluate_formula("M*K + (K/128)*N*2", {"M": 1, "N": 2, "K": 256}) == 264
    assert evaluate_formula("max(M, 4) ** 2", {"M": 3}) == 16
    for bad in ("M.__class__", "open('x')", "[M]", "M if M else 1", "1/0"):
        with pytest.raises(ValueError):
            evaluate_formula(bad, {"M": 2})


def test_describe_prints_the_folder_or_null_for_a_single_file(tmp_path):
    folder = _folder(tmp_path, "SHAPES = [{'n': 4}]")
    run = [sys.executable, "-m", "kforge_worker", "describe"]
    described = subprocess.run([*run, str(folder)], capture_output=True, text=True, cwd=WORKER, check=True)
    assert json.loads(described.stdout)["shapes"][0]["overrides"] == {"n": 4}
    single = tmp_path / "single.py"
    single.write_text(REFERENCE)
    alone = subprocess.run([*run, str(single)], capture_output=True, text=True, cwd=WORKER, check=True)
    assert json.loads(alone.stdout) == {"folder": None}
    (folder / "shapes.py").write_text("SHAPES = 3")
    broken = subprocess.run([*run, str(folder)], capture_output=True, text=True, cwd=WORKER)
    assert broken.returncode == 1 and "SHAPES" in json.loads(broken.stdout)["error"]["message"]
