"""KernelBench-Hard problem folders (docs/problems.md, "Problem folders").

A folder holds `reference.py` (a KernelBench-style problem: `Model`, `get_inputs`,
`get_init_inputs` and module constants such as `M`, `N`, `K`), `shapes.py` (`SHAPES`, a list of
dicts, each one size the problem is checked and timed at) and `problem.yaml` (the problem's
`tolerance` per dtype, its `forbidden` names, `flops_formula` and `bytes_formula`, `precision`).
A file named `reference.py` with `shapes.py` or `problem.yaml` beside it is read the same way when
it is given on its own.

Each shape becomes the module constants it sets (overrides.py), one evaluation each. A shape's key
names a module constant of reference.py exactly or, where none is spelled so, the one constant
that differs from it only in case (`batch` sets `BATCH`), as that harness's own `check.py` does.
A key that could be several constants is `invalid_input` with check `problem-load`. A key that
names none (an input variant that harness's `check.py` makes itself, such as `extreme`) is not
applied, and is listed in the shape's `unused` keys, which the result reports.
"""

import ast
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ..protocol.errors import StageFailure
from .declared_tolerance import DeclaredToleranceError, parse_tolerances
from .overrides import module_constants
from .work_formula import evaluate_formula

REFERENCE_FILE = "reference.py"
SHAPES_FILE = "shapes.py"
META_FILE = "problem.yaml"
CHECK = "problem-load"


@dataclass
class ProblemFolder:
    """What a problem folder declares beside its reference."""

    folder: str
    reference: str
    name: str
    #: Each shape as written in shapes.py, and the module constants it sets.
    shapes: List[Dict[str, Any]] = field(default_factory=list)
    shape_overrides: List[Dict[str, Any]] = field(default_factory=list)
    shape_unused: List[List[str]] = field(default_factory=list)
    tolerance: Optional[Dict[str, Any]] = None
    forbidden: List[str] = field(default_factory=list)
    flops_formula: Optional[str] = None
    bytes_formula: Optional[str] = None
    precision: Optional[str] = None

    def describe(self) -> dict:
        return {
            "folder": self.folder,
            "reference": self.reference,
            "name": self.name,
            "shapes": [
                {"index": index, "values": values, "overrides": overrides, "unused": unused}
                for index, (values, overrides, unused) in enumerate(
                    zip(self.shapes, self.shape_overrides, self.shape_unused)
                )
            ],
            "tolerance": self.tolerance,
            "forbidden": self.forbidden,
            "flops_formula": self.flops_formula,
            "bytes_formula": self.bytes_formula,
            "precision": self.precision,
        }


def _failure(message: str) -> StageFailure:
    return StageFailure("invalid_input", CHECK, message)


def folder_of(path: str) -> Optional[str]:
    """The problem folder `path` stands for (a folder with reference.py, or a reference.py with
    shapes.py or problem.yaml beside it), or None for a single-file problem."""
    path = os.path.abspath(path)
    if os.path.isdir(path):
        return path
    folder = os.path.dirname(path)
    if os.path.basename(path) == REFERENCE_FILE and (
        os.path.isfile(os.path.join(folder, SHAPES_FILE)) or os.path.isfile(os.path.join(folder, META_FILE))
    ):
        return folder
    return None


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise _failure(f"{path} cannot be read: {error.strerror or error}") from error


def _shapes(folder: str) -> List[Dict[str, Any]]:
    path = os.path.join(folder, SHAPES_FILE)
    if not os.path.isfile(path):
        return []
    namespace: Dict[str, Any] = {"__file__": path, "__name__": "kforge_problem_shapes"}
    try:
        exec(compile(_read(path), path, "exec", dont_inherit=True), namespace)
    except Exception as error:  # noqa: BLE001 - the folder's own file: said, never raised further
        raise _failure(f"{path} raised while loading: {type(error).__name__}: {error}") from error
    shapes = namespace.get("SHAPES")
    if not isinstance(shapes, (list, tuple)) or not shapes:
        raise _failure(f"{path} must define SHAPES, a non-empty list of dicts such as [{{'M': 4096, 'N': 4096}}]")
    for index, shape in enumerate(shapes):
        if not isinstance(shape, dict) or not shape:
            raise _failure(f"{path}: SHAPES[{index}] is {shape!r}; each shape is a non-empty dict of constants")
        for key, value in shape.items():
            if not isinstance(key, str) or not isinstance(value, (int, float)):
                raise _failure(
                    f"{path}: SHAPES[{index}] sets {key!r} to {value!r}; each value must be a number or a boolean"
                )
    return [dict(shape) for shape in shapes]


def _constant_for(key: str, constants: List[str], where: str) -> Optional[str]:
    """The module constant a shape's key sets, or None where reference.py has none of that name."""
    if key in constants:
        return key
    matches = [name for name in constants if name.lower() == key.lower()]
    if len(matches) > 1:
        raise _failure(f"{where} sets {key!r}, which could be any of {', '.join(matches)} in reference.py")
    return matches[0] if matches else None


def _meta(folder: str) -> Dict[str, Any]:
    path = os.path.join(folder, META_FILE)
    if not os.path.isfile(path):
        return {}
    try:
        import yaml
    except ImportError as error:  # pragma: no cover - python3-torch depends on python3-yaml
        raise _failure(f"{path} needs PyYAML to be read (install python3-yaml, or `pip install pyyaml`)") from error
    try:
        meta = yaml.safe_load(_read(path))
    except yaml.YAMLError as error:
        raise _failure(f"{path} is not valid YAML: {error}") from error
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise _failure(f"{path} must be a mapping (name:, tolerance:, forbidden: ...), not {type(meta).__name__}")
    return meta


def _text(meta: Dict[str, Any], key: str, path: str) -> Optional[str]:
    value = meta.get(key)
    if value is None:
        return None
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise _failure(f"{path}: `{key}` is {value!r}; write it as text")
    return str(value)


def read_folder(path: str) -> ProblemFolder:
    """The folder `path` stands for (folder_of), read and checked; StageFailure (invalid_input,
    problem-load) naming the file and what to write where it cannot be used."""
    folder = folder_of(path)
    if folder is None:
        raise _failure(f"{path} is not a problem folder: it needs {REFERENCE_FILE}, with {SHAPES_FILE} or {META_FILE}")
    reference = os.path.join(folder, REFERENCE_FILE)
    if not os.path.isfile(reference):
        raise _failure(f"the problem folder {folder} has no {REFERENCE_FILE} (the KernelBench-style Model)")
    try:
        constants = module_constants(ast.parse(_read(reference), filename=reference))
    except SyntaxError as error:
        raise _failure(f"{reference} has a syntax error at line {error.lineno}: {error.msg}") from error
    meta_path = os.path.join(folder, META_FILE)
    meta = _meta(folder)
    shapes = _shapes(folder)
    overrides: List[Dict[str, Any]] = []
    unused: List[List[str]] = []
    for index, shape in enumerate(shapes):
        named = {key: _constant_for(key, constants, f"{SHAPES_FILE} SHAPES[{index}]") for key in shape}
        overrides.append({name: shape[key] for key, name in named.items() if name is not None})
        unused.append([key for key, name in named.items() if name is None])
    tolerance = meta.get("tolerance")
    if tolerance is not None:
        try:
            parse_tolerances(tolerance)
        except DeclaredToleranceError as error:
            raise _failure(f"{meta_path}: `tolerance` cannot be used: {error}") from None
    forbidden = meta.get("forbidden") or []
    if not isinstance(forbidden, list) or not all(isinstance(name, str) and name.strip() for name in forbidden):
        raise _failure(f"{meta_path}: `forbidden` is {forbidden!r}; write a list of names such as ['torch._scaled_mm']")
    for key in ("flops_formula", "bytes_formula"):
        formula = _text(meta, key, meta_path)
        if formula is not None:
            values = {**shapes[0], **overrides[0]} if shapes else {}
            try:
                evaluate_formula(formula, {**{name: 1 for name in constants}, **values})
            except ValueError as error:
                raise _failure(f"{meta_path}: `{key}` cannot be used: {error}") from None
    return ProblemFolder(
        folder=folder,
        reference=reference,
        name=_text(meta, "name", meta_path) or os.path.basename(folder),
        shapes=shapes,
        shape_overrides=overrides,
        shape_unused=unused,
        tolerance=tolerance,
        forbidden=[name.strip() for name in forbidden],
        flops_formula=_text(meta, "flops_formula", meta_path),
        bytes_formula=_text(meta, "bytes_formula", meta_path),
        precision=_text(meta, "precision", meta_path),
    )


def declared_work(folder: Optional["ProblemFolder"], constants: Dict[str, Any]) -> Dict[str, Optional[float]]:
    """The folder's `flops_formula` and `bytes_formula` evaluated with the loaded module's
    constants (a shape's constants once it is applied), each also under its lower-case spelling
    (a formula may use a shape's key, `batch`, for the constant it set, `BATCH`); None for a
    formula the folder lacks or that cannot be evaluated."""
    names = {name: value for name, value in constants.items() if isinstance(value, (int, float))}
    names.update({name.lower(): value for name, value in list(names.items()) if name.lower() not in names})
    work: Dict[str, Optional[float]] = {"flops": None, "bytes": None}
    for key, formula in (
        ("flops", getattr(folder, "flops_formula", None)),
        ("bytes", getattr(folder, "bytes_formula", None)),
    ):
        if formula:
            try:
                work[key] = evaluate_formula(formula, names)
            except ValueError:
                work[key] = None
    return work


def main(argv: List[str]) -> int:
    """`python3 -m kforge_worker describe PATH`: one JSON object on stdout, `{"folder": null}` for a
    single-file problem; exit 1 with `{"error": {kind, check, message}}` for a folder that cannot be
    used, 2 when misused."""
    import json
    import sys

    if len(argv) != 1:
        print("usage: python3 -m kforge_worker describe PROBLEM_FOLDER_OR_FILE", file=sys.stderr)
        return 2
    if folder_of(argv[0]) is None:
        print(json.dumps({"folder": None}))
        return 0
    try:
        print(json.dumps(read_folder(argv[0]).describe()))
    except StageFailure as failure:
        print(json.dumps({"error": {"kind": failure.kind, "check": failure.check, "message": failure.message}}))
        return 1
    return 0
