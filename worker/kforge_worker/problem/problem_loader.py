"""Loading KernelBench-format files by path as fresh modules, applying `KFORGE_PRESETS`, and checking
`KFORGE_TOLERANCE` (declared_tolerance.py)."""

import os
import sys
import types
from typing import Optional, Tuple

import torch

from ..protocol.errors import StageFailure, failures_as, shorten
from .declared_tolerance import declared_tolerances
from .overrides import compile_with_overrides
from .problem_folder import ProblemFolder, folder_of, read_folder

PROBLEM_MODULE_NAME = "kforge_problem"


def read_source(path: str, check: str, what: str, overrides: Optional[dict] = None):
    """Reads and compiles a Python file (with `overrides` of its module constants: overrides.py);
    a code object, or StageFailure(invalid_input, check)."""
    try:
        with open(path, "rb") as source_file:
            source = source_file.read()
    except OSError as error:
        raise StageFailure(
            "invalid_input", check, f"the {what} file {path} cannot be read: {error.strerror or error}"
        ) from error
    try:
        if overrides:
            return compile_with_overrides(source, path, overrides)
        return compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as error:
        where = f"line {error.lineno}" if error.lineno else "an unknown line"
        raise StageFailure(
            "invalid_input", check, shorten(f"the {what} file {path} has a syntax error at {where}: {error.msg}")
        ) from error
    except (ValueError, UnicodeDecodeError) as error:
        raise StageFailure("invalid_input", check, f"the {what} file {path} is not Python source: {error}") from error


def execute_source(code, module_name: str, path: str, inherited: Optional[dict] = None) -> types.ModuleType:
    """Runs a compiled file as a fresh module registered in sys.modules under `module_name`, its
    namespace first filled with `inherited` (names the file's own assignments then replace)."""
    module = types.ModuleType(module_name)
    module.__dict__.update(inherited or {})
    module.__file__ = path
    sys.modules[module_name] = module
    exec(code, module.__dict__)
    return module


def problem_names(module: types.ModuleType) -> dict:
    """The problem module's globals but its dunder names: the namespace a candidate starts from.

    KernelBench's harness executes the reference and then the candidate in one namespace, so a
    published candidate may read the problem's constants (`batch_size`), imports and `Model`
    without defining them; the candidate module starts with these names to run as it did there.
    The values are the problem's after its preset and overrides."""
    return {name: value for name, value in vars(module).items() if not (name.startswith("__") and name.endswith("__"))}


def apply_preset(module: types.ModuleType, preset: str) -> None:
    """Sets the named preset's entries as module globals; a missing preset leaves the constants."""
    presets = module.__dict__.get("KFORGE_PRESETS")
    if presets is None:
        return
    if not isinstance(presets, dict) or not all(isinstance(entry, dict) for entry in presets.values()):
        raise StageFailure(
            "invalid_input",
            "problem-load",
            "KFORGE_PRESETS must map preset names to dicts of module constants, e.g. {'cpu': {'batch_size': 8}}",
        )
    for name, value in presets.get(preset, {}).items():
        if name not in module.__dict__:
            raise StageFailure(
                "invalid_input",
                "problem-load",
                f"preset {preset!r} sets {name!r}, which the problem does not define as a module constant",
            )
        setattr(module, name, value)


#: The module attribute a problem folder's declarations (problem_folder.ProblemFolder) are kept in.
FOLDER_ATTRIBUTE = "__kforge_folder__"


def problem_folder(module: types.ModuleType) -> Optional[ProblemFolder]:
    """The declarations of the folder a loaded problem came from, or None for a single file."""
    folder = module.__dict__.get(FOLDER_ATTRIBUTE)
    return folder if isinstance(folder, ProblemFolder) else None


def load_problem(path: str, preset: Optional[str], overrides: Optional[dict] = None) -> types.ModuleType:
    """Loads a problem file (Model, get_inputs, get_init_inputs), applies the preset, and the
    overrides of its constants (which win over the preset's). A problem folder (problem_folder.py)
    loads its reference.py, its declarations kept on the module (`problem_folder`); the caller
    picks a shape by passing that shape's constants as overrides. A `KFORGE_TOLERANCE` or a
    problem.yaml that cannot be used is `problem-load` here, in every role, before anything runs."""
    path = os.path.abspath(path)
    folder = read_folder(path) if folder_of(path) is not None else None
    if folder is not None:
        path = folder.reference
    code = read_source(path, "problem-load", "problem", overrides)
    with failures_as("invalid_input", "problem-load", f"the problem file {path} raised while loading"):
        module = execute_source(code, PROBLEM_MODULE_NAME, path, {FOLDER_ATTRIBUTE: folder} if folder else None)
    model_class = module.__dict__.get("Model")
    if not (isinstance(model_class, type) and issubclass(model_class, torch.nn.Module)):
        raise StageFailure(
            "invalid_input", "problem-load", f"the problem file {path} defines no class Model(torch.nn.Module)"
        )
    for name in ("get_inputs", "get_init_inputs"):
        if not callable(module.__dict__.get(name)):
            raise StageFailure("invalid_input", "problem-load", f"the problem file {path} defines no function {name}()")
    declared_tolerances(module)
    if preset is not None:
        apply_preset(module, preset)
        for name, value in (overrides or {}).items():
            setattr(module, name, value)
    return module


def load_candidate_problem(
    path: str, preset: Optional[str], overrides: Optional[dict] = None
) -> Tuple[types.ModuleType, Optional[ProblemFolder], dict]:
    """The problem as the candidate role starts from it, in one step: the loaded module
    (load_problem), the declarations of its folder (problem_folder: None for a single file) and
    the names the candidate's namespace starts with (problem_names)."""
    module = load_problem(path, preset, overrides)
    return module, problem_folder(module), problem_names(module)
