"""Problem folders (problem_folder.py): shapes to module constants, problem.yaml checked, formulas."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kforge_worker.problem.problem_folder import folder_of, read_folder
from kforge_worker.problem.work_formula import evaluate_formula
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


TWO_WEIGHTS = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(n))
        self.shift = nn.Parameter(torch.randn(n))

    def forward(self, x):
        return x * self.scale + self.shift

BATCH = 4
n = 8

def get_inputs():
    return [torch.randn(BATCH, n)]

def get_init_inputs():
    return [n]
"""

# The same parameters made in the other order (KernelBench's same-seed rule alone gives them each
# other's values), or left empty for the harness to load, as KernelBench-Hard's solutions do.
REORDERED = """
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.shift = nn.Parameter(torch.randn(n))
        self.scale = nn.Parameter(torch.empty(n))

    def forward(self, x):
        return torch.addcmul(self.shift, x, self.scale)
"""

RENAMED = REORDERED.replace("self.shift", "self.bias").replace("self.scale", "self.weight")


def _parameters_note(result) -> str:
    notes = [
        check["message"]
        for message in result.candidate.of_type("guard-checks")
        for check in message["checks"]
        if check["check"] == "parameters"
    ]
    assert len(notes) == 1, result.candidate.messages
    return notes[0]


@pytest.mark.parametrize(
    "source, passed, words", [(REORDERED, True, "loaded from Model's state_dict"), (RENAMED, False, "same seed")]
)
def test_parameters_matching_by_name_are_loaded_from_the_reference(tmp_path, build_dir, source, passed, words):
    from worker_process import PYTORCH, evaluate

    problem, candidate = tmp_path / "problem.py", tmp_path / "candidate.py"
    problem.write_text(TWO_WEIGHTS)
    candidate.write_text(source)
    result = evaluate(problem, candidate, tmp_path / "run", build_dir, run_timing=False, guard=PYTORCH)
    assert result.judgement["passed"] is passed, result.judgement
    assert words in _parameters_note(result)


def test_a_folder_is_judged_at_a_shape_with_its_declared_tolerance(tmp_path, build_dir):
    """The folder's reference at the constants of one shape (passed as overrides, as the command
    line does), and problem.yaml's tolerance chosen when the declared tolerance is asked for."""
    from worker_process import PYTORCH, evaluate

    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "reference.py").write_text(TWO_WEIGHTS)
    (folder / "shapes.py").write_text("SHAPES = [{'batch': 3, 'n': 5}]")
    (folder / "problem.yaml").write_text("tolerance:\n  float32: 0.25\n")
    candidate = tmp_path / "candidate.py"
    candidate.write_text(REORDERED.replace("x, self.scale)", "x, self.scale) + 0.125"))
    overrides = read_folder(str(folder)).shape_overrides[0]
    result = evaluate(
        folder,
        candidate,
        tmp_path / "run",
        build_dir,
        run_timing=False,
        guard=PYTORCH,
        overrides=overrides,
        declared_tolerance=True,
    )
    ready = result.reference.of_type("reference-ready")[0]
    assert ready["tolerance"]["source"] == "problem" and ready["tolerance"]["atol"] == 0.25, ready["tolerance"]
    assert result.judgement["passed"] is True, result.judgement  # 0.125 off, within the declared 0.25
    handed = result.candidate.of_type("handover")[0]["output"]["leaves"]
    assert handed == [{"tensor": {"dtype": "float32", "shape": [3, 5], "nbytes": 60}}], handed  # the shape's sizes


def test_declared_formulas_give_the_roofline_its_work_at_the_shape(tmp_path, build_dir):
    """problem.yaml's formulas, at the shape's constants (the lower-case shape key too), replace
    the measured FLOPs and bytes in the reference's `roofline` message."""
    from worker_process import PYTORCH, evaluate

    from kforge_worker.problem.problem_folder import declared_work

    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "reference.py").write_text(TWO_WEIGHTS)
    (folder / "shapes.py").write_text("SHAPES = [{'batch': 3, 'n': 5}, {'batch': 6, 'n': 7}]")
    (folder / "problem.yaml").write_text("flops_formula: '2 * batch * n'\nbytes_formula: 'BATCH * n * 8'\n")
    described = read_folder(str(folder))
    assert declared_work(described, {"BATCH": 6, "n": 7}) == {"flops": 84.0, "bytes": 336.0}
    candidate = tmp_path / "candidate.py"
    candidate.write_text(REORDERED)
    result = evaluate(
        folder,
        candidate,
        tmp_path / "run",
        build_dir,
        run_timing=False,
        guard=PYTORCH,
        overrides=described.shape_overrides[1],
    )
    roofline = result.reference.of_type("roofline")[0]
    assert (roofline["flops"], roofline["bytes"]) == (84.0, 336.0), roofline
    assert (
        roofline["flop_method"] == "problem.yaml flops_formula"
        and roofline["bytes_method"] == "problem.yaml bytes_formula"
    )


def test_a_solution_naming_its_class_model_is_judged_as_modelnew(tmp_path, build_dir):
    """KernelBench-Hard's solutions define `class Model` and no ModelNew: the file's own Model is
    the candidate (never the problem's, which its namespace starts with)."""
    from worker_process import PYTORCH, evaluate

    problem, candidate = tmp_path / "problem.py", tmp_path / "solution.py"
    problem.write_text(TWO_WEIGHTS)
    candidate.write_text(REORDERED.replace("class ModelNew(", "class Model("))
    result = evaluate(problem, candidate, tmp_path / "run", build_dir, run_timing=False, guard=PYTORCH)
    assert result.failures == {} and result.judgement["passed"] is True, result.failures
    assert "loaded from Model's state_dict" in _parameters_note(result)
    # A file with neither is still told what to define.
    candidate.write_text("import torch\n")
    refused = evaluate(problem, candidate, tmp_path / "run2", build_dir, run_timing=False, guard=PYTORCH)
    assert refused.failures["candidate"]["check"] == "candidate-load", refused.failures
    assert "a class Model of its own" in refused.failures["candidate"]["message"]
