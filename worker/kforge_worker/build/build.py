"""The candidate's build: executing its module with extension builds pointed at `build_dir`.

`load_inline`/`load` are wrapped so that builds are quiet (`verbose=False`: the compiler's output
then travels inside the exception), land in `TORCH_EXTENSIONS_DIR=build_dir`, the shared
objects they load are recorded for `cuobjdump`, and the functions of each module they return are
wrapped to record their calls (extension_calls.py) before the candidate sees the module. On a torch
before 2.1 the times of unchanged inline sources are kept first (source_times.py), so that ninja
finds them built. Failures are classified:

- torch's `Error building extension` RuntimeError, a Triton CompilationError, or an extension
  that built but will not load (undefined symbol) → compile_error / build;
- unreadable file, SyntaxError, no `ModelNew(torch.nn.Module)` (nor a `Model` class of the file's
  own, KernelBench-Hard's name for it) → invalid_input / candidate-load;
- any other exception while importing → runtime_error / import (out of memory and device errors
  as in errors.py).
"""

import functools
import inspect
import os
import re
from dataclasses import dataclass, field
from typing import List, Optional

import torch

from .extension_calls import ExtensionCalls
from .source_times import keep_unchanged_source_times
from ..backends.backend import Backend
from ..problem.problem_loader import execute_source, read_source
from ..protocol.errors import StageFailure, classify, format_traceback, shorten

CANDIDATE_MODULE_NAME = "kforge_candidate"
COMPILER_OUTPUT_LIMIT_CHARS = 1024 * 1024
BUILD_ERROR_MARKER = "Error building extension"
_ERROR_LINE = re.compile(r"(\berror\b|\bError\b)")
# `nvcc fatal   : Unsupported gpu architecture 'compute_70'`, `ptxas fatal   : …`, `fatal error: x.h: …`
_FATAL_LINE = re.compile(r"^(?:nvcc|ptxas|cicc|fatbinary|nvlink) fatal\s*:|\bfatal error\b")
_SOURCE_PATH = re.compile(r"(?:/[^\s/:()\"']+)+/([^\s/:()\"']+\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp))\b")
_NINJA_ECHO = re.compile(r"^(?:\[\d+/\d+\]\s|FAILED:\s)")


@dataclass
class BuiltCandidate:
    module: object
    model_class: type
    shared_objects: List[str] = field(default_factory=list)
    extensions: ExtensionCalls = field(default_factory=ExtensionCalls)


def configure_build_environment(build_dir: str, backend: Backend, device: torch.device) -> None:
    """Extensions build into `build_dir`, configured by the request's backend for its device (on
    cuda, for its own architecture: backends/nvidia.py, `cuda_arch_list`)."""
    os.makedirs(build_dir, exist_ok=True)
    os.environ["TORCH_EXTENSIONS_DIR"] = build_dir
    backend.build.configure(device)


def _quiet(original, shared_objects: List[str], extensions: ExtensionCalls):
    signature = inspect.signature(original)

    @functools.wraps(original)
    def build(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return original(*args, **kwargs)
        bound.arguments["verbose"] = False
        bound.arguments.pop("build_directory", None)
        try:
            module = original(*bound.args, **bound.kwargs)
        except BaseException as error:
            extensions.build_failed(error)
            raise
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.endswith(".so"):
            shared_objects.append(path)
        extensions.adopt(module)
        return module

    return build


def install_extension_hooks(shared_objects: List[str], extensions: ExtensionCalls) -> None:
    """Replaces torch.utils.cpp_extension.load_inline/load with quiet, recording wrappers."""
    import torch.utils.cpp_extension as cpp_extension

    cpp_extension.load_inline = _quiet(cpp_extension.load_inline, shared_objects, extensions)
    cpp_extension.load = _quiet(cpp_extension.load, shared_objects, extensions)


def first_error_line(output: str) -> str:
    """The compiler's first error line (`file.cu(12): error: …`, `nvcc fatal   : …`), or its first line.

    ninja's progress lines (`[1/3] /usr/local/cuda/bin/nvcc …`) and `FAILED:` lines echo whole
    command lines (a path or flag may hold the word "error"); they are never the error itself.
    """
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    candidates = [line for line in lines if BUILD_ERROR_MARKER not in line and not _NINJA_ECHO.match(line)]
    for line in candidates:
        if "error:" in line.lower() or _FATAL_LINE.search(line):
            return line
    for line in candidates:
        if _ERROR_LINE.search(line) and not line.startswith("ninja:"):
            return line
    return lines[0] if lines else ""


def without_build_folders(line: str) -> str:
    """The line with each source path cut to its file name: `/…/builds/<hash>/ext/cuda.cu(6): error: …`
    becomes `cuda.cu(6): error: …`, so the error itself fits in a short message."""
    return _SOURCE_PATH.sub(r"\1", line)


def _compile_failure(exc: BaseException, compiler_output: str, what: str) -> StageFailure:
    output = compiler_output[:COMPILER_OUTPUT_LIMIT_CHARS]
    return StageFailure(
        "compile_error",
        "build",
        shorten(f"{what} did not build: {without_build_folders(first_error_line(output))}"),
        traceback_text=format_traceback(exc),
        compiler_output=output,
    )


def classify_build_exception(exc: BaseException) -> StageFailure:
    """The failure for an exception raised while the candidate module ran."""
    if isinstance(exc, StageFailure):
        return exc
    text = str(exc)
    if isinstance(exc, RuntimeError) and BUILD_ERROR_MARKER in text:
        _, _, output = text.partition(": ")
        return _compile_failure(exc, output or text, "the extension")
    if isinstance(exc, ImportError) and "undefined symbol" in text:
        return _compile_failure(exc, text, "the extension (it built but does not load)")
    return classify(exc, "runtime_error", "import", "the candidate raised while importing")


def build_candidate(
    path: str, build_dir: str, backend: Backend, device: torch.device, inherited: Optional[dict] = None
) -> BuiltCandidate:
    """Executes the candidate file as a fresh module whose namespace starts with `inherited` (the
    problem's names: problem_loader.problem_names); its ModelNew class and built objects."""
    path = os.path.abspath(path)
    keep_unchanged_source_times()
    configure_build_environment(build_dir, backend, device)
    shared_objects: List[str] = []
    extensions = ExtensionCalls()
    install_extension_hooks(shared_objects, extensions)
    code = read_source(path, "candidate-load", "candidate")
    try:
        module = execute_source(code, CANDIDATE_MODULE_NAME, path, inherited)
    except (Exception, SystemExit) as exc:
        raise classify_build_exception(exc) from exc
    model_class = module.__dict__.get("ModelNew")
    own_model = module.__dict__.get("Model")
    if model_class is None and own_model is not (inherited or {}).get("Model"):
        # KernelBench-Hard's solutions name their class `Model`: one of the file's own, not the
        # problem's (which the namespace started with), stands for ModelNew.
        model_class = own_model
    if not (isinstance(model_class, type) and issubclass(model_class, torch.nn.Module)):
        found = "no ModelNew" if model_class is None else f"ModelNew as a {type(model_class).__name__}"
        raise StageFailure(
            "invalid_input",
            "candidate-load",
            f"the candidate file {path} defines {found}; it must define class ModelNew(torch.nn.Module) "
            "(or, as KernelBench-Hard's solutions do, a class Model of its own)",
        )
    return BuiltCandidate(module=module, model_class=model_class, shared_objects=shared_objects, extensions=extensions)
