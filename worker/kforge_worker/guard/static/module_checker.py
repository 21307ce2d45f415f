"""Whole-module checks: timer-patch, harness-read, sandbox, deferred-work, side-stream, global-state,
precision, torch.compile.
"""

from __future__ import annotations

import ast
from typing import Any, Mapping

from .compute_names import _TORCH_COMPILERS
from .names import (
    _DTYPE_NAMES,
    _GLOBAL_STATE_CALLS,
    _PRECISION_CALLS,
    _RANK,
    _RUNTIME_STATE_CALLS,
    _RUN_PRECISIONS,
    _SEED_CALLS,
)
from .sandbox_names import (
    _CONCURRENCY_MODULES,
    _DEFERRED_CALLS,
    _DEFERRED_PREFIXES,
    _DYNAMIC_CODE,
    _FD_CALLS,
    _FRAME_ATTRIBUTES,
    _HARNESS_READ_CALLS,
    _JOIN_METHODS,
    _NETWORK_MODULES,
    _PATH_READ_METHODS,
    _PATH_WRITE_METHODS,
    _PROCESS_MODULES,
    _READ_PATH_CALLS,
    _SIDE_STREAM_CALLS,
    _SUBPROCESS_CALLS,
    _SUBPROCESS_PREFIXES,
    _TENSOR_BASES,
    _WRITE_PATH_CALLS,
)
from .file_rules import _FileRules
from .patch_rules import _PatchRules
from .report import _Report, _at, _line, measured_precision_note
from .symbols import _Module, _call_argument, _fold_string, _qualname


# ---------------------------------------------------------------------------------------------
# Whole module: timer-patch, harness-read, sandbox, deferred-work, side-stream, global-state,
# precision, torch.compile
# ---------------------------------------------------------------------------------------------

_LOW_DTYPE_PREFIX = "torch.float8"


def _dtype_of(node: ast.AST | None, module: _Module) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _DTYPE_NAMES.get(node.value) or ("float8" if node.value.startswith(_LOW_DTYPE_PREFIX) else None)
    qual = _qualname(node, module.aliases) if node is not None else None
    if qual is None:
        return None
    if qual.startswith(_LOW_DTYPE_PREFIX):
        return "float8"
    return _DTYPE_NAMES.get(qual)


class _ModuleChecker(_FileRules, _PatchRules):
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

    # -- imports ---------------------------------------------------------------------------

    def _import(self, name: str, node: ast.AST) -> None:
        if not name:
            return
        root = name.split(".")[0]
        if root in _NETWORK_MODULES:
            self.report.add(
                "sandbox",
                f"the candidate imports {name}{_at(node)}: candidates run without "
                f"network access; remove the import",
                _line(node),
                confined=True,
            )
        elif root in _PROCESS_MODULES:
            self.report.add(
                "sandbox",
                f"the candidate imports {name}{_at(node)}: candidates may not start " f"processes; remove the import",
                _line(node),
                confined=True,
            )
        elif root == "__main__" or root.startswith("kforge"):
            self.report.add(
                "harness-read",
                f"the candidate imports {name}{_at(node)}, the harness's own "
                f"module: a candidate may not reach into the evaluator; remove it",
                _line(node),
            )
        elif name == "unittest.mock" or root == "mock":
            self.report.add(
                "timer-patch",
                f"the candidate imports {name}{_at(node)}, a patching library: "
                f"a candidate may not patch the harness or torch; remove it",
                _line(node),
            )
        elif name in _CONCURRENCY_MODULES or root in (
            "threading",
            "_thread",
            "multiprocessing",
            "concurrent",
            "asyncio",
        ):
            self.report.add(
                "deferred-work",
                f"the candidate imports {name}{_at(node)}; starting threads, "
                f"processes or tasks is rejected, the output must be complete "
                f"when forward returns",
                _line(node),
                "note",
            )
        elif root == "ctypes":
            self.report.add(
                "harness-read",
                f"the candidate imports ctypes{_at(node)}; raw memory reads " f"through it are rejected",
                _line(node),
                "note",
            )

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

    def _call_reaching_out(self, node: ast.Call, qual: str, label: str) -> bool:
        """Calls that reach outside the candidate: the harness's state, raw memory, libraries,
        processes, the network, code built at run time, imports by name. False when none applies."""
        line, at = _line(node), _at(node)
        if qual in _HARNESS_READ_CALLS:
            self.report.add(
                "harness-read",
                f"the candidate calls {label}(){at}, which "
                f"{_HARNESS_READ_CALLS[qual]}: reading the harness's state is "
                f"rejected; compute the answer from the inputs",
                line,
            )
        elif qual.startswith("ctypes.") and (
            qual.endswith((".from_address", ".from_buffer")) or qual.startswith("ctypes.pythonapi")
        ):
            self.report.add(
                "harness-read",
                f"the candidate calls {label}(){at}, which reads raw process "
                f"memory: reading the harness's state is rejected",
                line,
            )
        elif qual in (
            "ctypes.CDLL",
            "ctypes.cdll.LoadLibrary",
            "ctypes.PyDLL",
            "ctypes.pydll.LoadLibrary",
            "torch.ops.load_library",
            "torch.classes.load_library",
        ):
            self.report.add(
                "library-policy",
                f"the candidate loads a shared library with {label}(){at}; " f"the guard cannot see what it calls",
                line,
                "note",
            )
        elif qual in (
            "torch.cuda.memory_snapshot",
            "torch.cuda.memory._snapshot",
            "torch.cuda.memory._record_memory_history",
        ):
            self.report.add(
                "harness-read", f"the candidate reads the CUDA allocator's state with " f"{label}(){at}", line, "note"
            )
        elif qual in _SUBPROCESS_CALLS or qual.startswith(_SUBPROCESS_PREFIXES):
            self.report.add(
                "sandbox",
                f"the candidate calls {label}(){at}: candidates may not start "
                f"processes, send signals or change process state; remove it",
                line,
                confined=True,
            )
        elif qual.split(".")[0] in _NETWORK_MODULES:
            self.report.add(
                "sandbox",
                f"the candidate calls {label}(){at}: candidates run without network " f"access; remove it",
                line,
                confined=True,
            )
        elif qual in _DYNAMIC_CODE:
            self.report.add(
                "sandbox",
                f"the candidate calls {label}(){at}: code built or loaded at run time "
                f"cannot be checked; write it out in the candidate",
                line,
            )
        elif qual in ("builtins.__import__", "importlib.import_module"):
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                self._import(first.value, node)
            else:
                self.report.add(
                    "sandbox",
                    f"the candidate imports a module by a computed name{at}: "
                    f"write the import out so it can be checked",
                    line,
                )
        else:
            return False
        return True

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

    def _global_state_call(self, qual: str, label: str, node: ast.AST) -> None:
        """Seeds, the switches the run-time snapshot reads, and limits of the candidate's own process
        are notes: the run time decides (docs/guard.md, `global-state` and `precision`)."""
        line, at = _line(node), _at(node)
        if qual in _SEED_CALLS:
            self.report.add(
                "global-state",
                f"the candidate calls {label}(){at}: the worker reseeds torch, random and numpy with "
                f"each call's own seed before every call, so this seed changes nothing that is judged",
                line,
                "note",
            )
        elif qual in _RUNTIME_STATE_CALLS:
            self._runtime_state_note("global-state", qual, node)
        else:
            self.report.add(
                "global-state",
                f"the candidate calls {label}(){at}: it limits only the candidate's own process (the "
                f"reference and the baselines run in processes of their own)",
                line,
                "note",
            )

    def _runtime_state_note(self, check: str, qual: str, node: ast.AST) -> None:
        written = ast.unparse(node)
        written = written if len(written) <= 80 else written[:77] + "..."
        self.report.add(
            check,
            f"the candidate calls `{written}`{_at(node)}, which changes {_RUNTIME_STATE_CALLS[qual]}: judged "
            f"at run time (the worker compares torch's global state before and after the import, the "
            f"construction, the correctness trials and the timed calls, and rejects a change)",
            _line(node),
            "note",
        )

    def _is_context(self, node: ast.AST) -> bool:
        parent = self.module.parents.get(node)
        return isinstance(parent, ast.withitem)

    def _matmul_precision(self, node: ast.Call) -> None:
        value = node.args[0] if node.args else _call_argument(node, "precision", None)
        lowers = not (isinstance(value, ast.Constant) and value.value == "highest")
        self._runtime_state_note("precision" if lowers else "global-state", "torch.set_float32_matmul_precision", node)

    def _triton_dot(self, node: ast.Call) -> None:
        if self.run_dtype != "float32":
            return
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg == "input_precision" and isinstance(value, ast.Constant) and value.value in ("ieee",):
                return
            if keyword.arg == "allow_tf32" and isinstance(value, ast.Constant) and value.value is False:
                return
        self._measured_precision_note(
            f"calls tl.dot{_at(node)}, which uses TF32 for float32 inputs by default "
            f'(input_precision="ieee" keeps full float32)',
            _line(node),
        )

    def _cast(self, node: ast.Call) -> None:
        """Casts below the run precision: x.half(), x.to(torch.float16), dtype=torch.bfloat16."""
        func = node.func
        target: str | None = None
        if isinstance(func, ast.Attribute) and func.attr in ("half", "bfloat16") and not node.args:
            target = "float16" if func.attr == "half" else "bfloat16"
        elif isinstance(func, ast.Attribute) and func.attr in ("to", "type", "type_as"):
            for argument in node.args:
                target = target or _dtype_of(argument, self.module)
        for keyword in node.keywords:
            if keyword.arg == "dtype":
                target = target or _dtype_of(keyword.value, self.module)
        if target is None or self.run_dtype is None or _RANK[target] >= _RANK.get(self.run_dtype, 2):
            return
        if self.run_dtype == "float16" and target == "float16":
            return
        if self._guarded_by_dtype(node):
            return
        self._measured_precision_note(f"casts to {target} with `{ast.unparse(node)}`{_at(node)}", _line(node))

    def _measured_precision_note(self, what: str, line: int | None) -> None:
        """Arithmetic below the run precision, as the source shows it: a note, because the measured
        error profile judges what it costs (docs/guard.md, `precision-loss`)."""
        self.report.add("precision", measured_precision_note(f"the candidate {what}", self.precision), line, "note")

    def _branch_tests(self, node: ast.AST):
        """The tests of the `if` statements whose body holds `node`, innermost first."""
        current = node
        while current in self.module.parents:
            parent = self.module.parents[current]
            if isinstance(parent, ast.If) and current in parent.body:
                yield parent.test
            current = parent

    def _guarded_by_dtype(self, node: ast.AST) -> bool:
        """True inside ``if x.dtype == torch.float16:`` (a branch for inputs of that dtype)."""
        for test in map(ast.unparse, self._branch_tests(node)):
            if "dtype" in test and any(word in test for word in ("float16", "half", "bfloat16")):
                return True
        return False

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
