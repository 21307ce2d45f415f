"""Whole-module checks: timer-patch, harness-read, sandbox, deferred-work, side-stream, global-state,
precision, torch.compile.
"""

from __future__ import annotations

import ast
from typing import Any, Mapping

from .compute_names import _TORCH_COMPILERS
from .names import _GLOBAL_STATE_CALLS, _PRECISION_CALLS, _RUN_PRECISIONS
from .sandbox_names import (
    _DEFERRED_CALLS,
    _DEFERRED_PREFIXES,
    _FD_CALLS,
    _FRAME_ATTRIBUTES,
    _JOIN_METHODS,
    _PATH_READ_METHODS,
    _PATH_WRITE_METHODS,
    _READ_PATH_CALLS,
    _SIDE_STREAM_CALLS,
    _TENSOR_BASES,
    _WRITE_PATH_CALLS,
)
from .file_rules import _FileRules
from .patch_rules import _PatchRules
from .precision_rules import _PrecisionRules
from .reach_rules import _ReachRules
from .report import _Report, _at, _line
from .symbols import _Module, _call_argument, _fold_string, _qualname


class _ModuleChecker(_FileRules, _PatchRules, _PrecisionRules, _ReachRules):
    """Checks the whole module: its imports, calls, assignments, classes and decorators (rules on
    files in file_rules.py, patches in patch_rules.py, precision in precision_rules.py, what
    reaches outside the candidate in reach_rules.py)."""

    def __init__(self, module: _Module, report: _Report, policy: Mapping[str, Any], precision: str):
        self.module = module
        self.report = report
        self.policy = policy
        self.run_dtype = _RUN_PRECISIONS.get(precision, "float32")
        self.precision = precision
        self.stream_sites: list[ast.AST] = []
        self.join_sites: list[ast.AST] = []

    def qual(self, node: ast.AST | None) -> str | None:
        return _qualname(node, self.module.aliases, None, self.module.local_names) if node is not None else None

    def run(self) -> None:
        for node in ast.walk(self.module.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self._import(alias.name, node)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                self._import(base, node)
                for alias in node.names:
                    if f"{base}.{alias.name}" in ("unittest.mock",):
                        self._import(f"{base}.{alias.name}", node)
            elif isinstance(node, ast.Call):
                self._call(node)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    self._target(target, node, getattr(node, "value", None))
            elif isinstance(node, ast.Delete):
                for target in node.targets:
                    self._target(target, node, None)
            elif isinstance(node, ast.ClassDef):
                self._class(node)
            elif isinstance(node, ast.Attribute):
                self._attribute(node)
            elif isinstance(node, ast.Name):
                if node.id == "__builtins__" and isinstance(node.ctx, ast.Store):
                    self._patch(node, "builtins")
                elif node.id in self.module.aliases:
                    self._module_object(node)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._decorators(node)
        self._side_stream_summary()

    # -- calls -----------------------------------------------------------------------------

    def _call(self, node: ast.Call) -> None:
        qual = self.qual(node.func)
        if qual is None:
            self._method_call(node)
            return
        label = ast.unparse(node.func)
        rules = (self._call_reaching_out, self._call_on_files, self._call_on_work_and_state, self._call_patching)
        for rule in rules:
            if rule(node, qual, label):
                break
        self._cast(node)

    def _call_on_files(self, node: ast.Call, qual: str, label: str) -> bool:
        """Calls on files, descriptors and the environment. False when none applies."""
        if qual in _FD_CALLS:
            self._fd_call(node, qual)
        elif qual in ("builtins.open", "io.open", "os.open", "codecs.open", "io.FileIO"):
            self._open(node, qual)
        elif qual in _WRITE_PATH_CALLS:
            self._path(node, _call_argument(node, "dst", _WRITE_PATH_CALLS[qual]), True, label)
        elif qual in _READ_PATH_CALLS and _READ_PATH_CALLS[qual] is not None:
            self._path(node, _call_argument(node, "path", _READ_PATH_CALLS[qual]), False, label)
        elif qual in ("os.getenv", "os.getenvb", "os.putenv", "os.unsetenv"):
            key = node.args[0] if node.args else None
            self._environment(node, key, write=qual in ("os.putenv", "os.unsetenv"), bulk=False)
        else:
            return False
        return True

    def _call_on_work_and_state(self, node: ast.Call, qual: str, label: str) -> bool:
        """Calls that defer work, use streams, or change global state, precision or compilation.
        False when none applies."""
        line, at = _line(node), _at(node)
        if qual in _DEFERRED_CALLS or qual.startswith(_DEFERRED_PREFIXES):
            description = _DEFERRED_CALLS.get(qual, "starts a process")
            self.report.add(
                "deferred-work",
                f"the candidate calls {label}(){at}, which {description}: the "
                f"output must be computed before forward returns, on the "
                f"calling thread; remove it",
                line,
            )
        elif qual in _SIDE_STREAM_CALLS:
            self.stream_sites.append(node)
        elif qual == "torch.cuda.synchronize":
            self.join_sites.append(node)
        elif qual in _GLOBAL_STATE_CALLS:
            if not self._is_context(node):
                self._global_state_call(qual, label, node)
        elif qual == "torch.set_float32_matmul_precision":
            self._matmul_precision(node)
        elif qual == "torch.set_autocast_enabled":
            self._runtime_state_note("precision", qual, node)
        elif qual in _PRECISION_CALLS:
            if self.run_dtype == "float32":
                self._measured_precision_note(f"runs under {label}(){at}, which computes in float16/bfloat16", line)
        elif qual in _TORCH_COMPILERS:
            self._compiler_note(label, node)
        else:
            return False
        return True

    def _call_patching(self, node: ast.Call, qual: str, label: str) -> bool:
        """Calls that patch or look up attributes, and the remaining special cases. False when none
        applies."""
        line, at = _line(node), _at(node)
        if qual in ("builtins.setattr", "builtins.delattr", "object.__setattr__", "object.__delattr__"):
            self._setattr(node)
        elif (
            qual == "builtins.getattr"
            and len(node.args) >= 2
            and _fold_string(node.args[1]) is None
            and (self.qual(node.args[0]) or "").split(".")[0] == "torch"
        ):
            self.report.add(
                "torch-fallback",
                f"the candidate looks up a torch attribute by a computed name "
                f"(`{ast.unparse(node)}`){at}: write the name out so the call "
                f"can be checked",
                line,
            )
        elif qual.startswith(("unittest.mock.", "mock.")):
            self.report.add(
                "timer-patch",
                f"the candidate patches with {label}(){at}: a candidate may not "
                f"patch the harness or torch; remove it",
                line,
            )
        elif qual == "triton.language.dot":
            self._triton_dot(node)
        elif qual == "torch.utils.cpp_extension.load":
            self.report.add(
                "library-policy",
                f"the candidate builds from source files with {label}(){at}; "
                f"only inline sources can be checked, so pass them to "
                f"load_inline",
                line,
                "note",
            )
        elif qual.startswith("sys.modules."):
            self._sys_modules_method(node, qual.rsplit(".", 1)[1])
        elif qual.startswith("os.environ."):
            pass  # handled where os.environ itself appears
        elif qual.startswith("pathlib.") and isinstance(node.func, ast.Attribute):
            self._method_call(node)
        else:
            return False
        return True

    def _method_call(self, node: ast.Call) -> None:
        func = node.func
        if not isinstance(func, ast.Attribute):
            return
        if func.attr in _JOIN_METHODS:
            self.join_sites.append(node)
        if func.attr in _PATH_WRITE_METHODS | _PATH_READ_METHODS | {"open"}:
            receiver = func.value
            if isinstance(receiver, ast.Call) and self.qual(receiver.func) in ("pathlib.Path", "pathlib.PurePath"):
                path = receiver.args[0] if receiver.args else None
                write = func.attr in _PATH_WRITE_METHODS or (
                    func.attr == "open" and self._write_mode(_call_argument(node, "mode", 0))
                )
                self._path(node, path, write, f"pathlib.Path.{func.attr}")
        self._cast(node)

    def _compiler_note(self, label: str, node: ast.AST) -> None:
        """torch.compile, torch.jit and fx tracing: what the compiled code runs is judged at run time
        (docs/guard.md, "What ran"), not the mention."""
        self.report.add(
            "torch-fallback",
            f"the candidate uses {label}{_at(node)}: code generated from PyTorch ops is PyTorch's work, "
            f"not the candidate's kernel; judged by what runs (a forward whose work only the compiled "
            f"PyTorch code does is rejected at run time under every policy but `pytorch`)",
            _line(node),
            "note",
        )

    # -- classes, attributes, decorators ---------------------------------------------------

    def _class(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            qual = self.qual(base)
            if qual in _TENSOR_BASES:
                kind = "a torch.Tensor subclass" if "Mode" not in qual else f"a {qual.rsplit('.', 1)[1]}"
                self.report.add(
                    "deferred-work",
                    f"the candidate defines {node.name}, {kind}{_at(node)}: outputs "
                    f"must be plain torch.Tensor objects with real storage, and the "
                    f"harness's torch calls may not be intercepted; remove it",
                    _line(node),
                )
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in (
                "__torch_function__",
                "__torch_dispatch__",
            ):
                self.report.add(
                    "deferred-work",
                    f"{node.name} defines {item.name}{_at(item)}: it intercepts torch "
                    f"calls (lazy results, rewritten comparisons); remove it",
                    _line(item),
                )

    def _attribute(self, node: ast.Attribute) -> None:
        if node.attr in _FRAME_ATTRIBUTES:
            self.report.add(
                "harness-read",
                f"the candidate reads `{ast.unparse(node)}`{_at(node)}, interpreter "
                f"internals that reach the harness's frames and objects; remove it",
                _line(node),
            )
            return
        self._module_object(node)

    def _decorators(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            qual = self.qual(target)
            if qual in _TORCH_COMPILERS and not isinstance(decorator, ast.Call):
                self._compiler_note(f"{ast.unparse(target)} on {node.name}", node)

    def _side_stream_summary(self) -> None:
        if not self.stream_sites:
            return
        first = min(self.stream_sites, key=lambda item: _line(item) or 0)
        joined = [site for site in self.join_sites if _line(site)]
        tail = (
            f"; it is joined back at line {_line(joined[0])}"
            if joined
            else "; no wait_stream/synchronize joins it back"
        )
        self.report.add(
            "side-stream",
            f"the candidate uses a non-default CUDA stream (`{ast.unparse(first)}`)"
            f"{_at(first)}{tail}: work left on a side stream escapes the timer, so "
            f"the dynamic check compares event time with wall time",
            _line(first),
            "note",
        )
