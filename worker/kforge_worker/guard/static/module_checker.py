"""Whole-module checks: timer-patch, harness-read, sandbox, deferred-work, side-stream, global-state,
precision, torch.compile.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Mapping

from .names import (
    _CONCURRENCY_MODULES,
    _DEFERRED_CALLS,
    _DEFERRED_PREFIXES,
    _DTYPE_NAMES,
    _DYNAMIC_CODE,
    _FD_CALLS,
    _FRAME_ATTRIBUTES,
    _GLOBAL_STATE_CALLS,
    _HARNESS_ENVIRONMENT_PREFIXES,
    _HARNESS_READ_CALLS,
    _INJECTING_ENVIRONMENT,
    _JOIN_METHODS,
    _NETWORK_MODULES,
    _PATH_READ_METHODS,
    _PATH_WRITE_METHODS,
    _PRECISION_CALLS,
    _PRECISION_FLAGS,
    _PROCESS_MODULES,
    _RANK,
    _READ_PATH_CALLS,
    _RUN_PRECISIONS,
    _RUNTIME_STATE_CALLS,
    _RUNTIME_STATE_FLAGS,
    _SEED_CALLS,
    _SIDE_STREAM_CALLS,
    _SUBPROCESS_CALLS,
    _SUBPROCESS_PREFIXES,
    _TENSOR_BASES,
    _TIMING_TARGETS,
    _TORCH_COMPILERS,
    _WRITE_PATH_CALLS,
)
from .report import _Report, _at, _line, measured_precision_note
from .symbols import _Module, _call_argument, _fold_string, _qualname, _resolve_text

#: Names that hold credentials: reading one is a rejection even though the sandbox leaves it unset.
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)


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


#: The modules whose functions kforge's worker calls while it evaluates (and those PyTorch's own
#: calls go through): a candidate that replaces an attribute of one of them may change what the
#: harness computes or times, so `timer-patch` rejects it. An assignment to any other module's
#: attribute (`datetime.UTC`, a KernelBench-Hard `reference.M`) reaches only the candidate's code.
HARNESS_MODULES = frozenset(
    """
    argparse array ast builtins collections contextlib copy ctypes dataclasses errno faulthandler fcntl functools
    gc hashlib importlib inspect io json logging math numpy os pickle platform random re resource select
    shutil signal socket stat statistics struct subprocess sys tempfile threading time timeit torch
    traceback triton types typing warnings weakref yaml
    """.split()
)


class _ModuleChecker:
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
        line = _line(node)
        at = _at(node)
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
        elif qual in _FD_CALLS:
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
        elif qual in _DEFERRED_CALLS or qual.startswith(_DEFERRED_PREFIXES):
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
        elif qual in ("builtins.setattr", "builtins.delattr", "object.__setattr__", "object.__delattr__"):
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
        self._cast(node)

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

    def _fd_call(self, node: ast.Call, qual: str) -> None:
        first = node.args[0] if node.args else None
        if (
            isinstance(first, ast.Constant)
            and isinstance(first.value, int)
            and first.value in (0, 1, 2)
            and qual in ("os.write", "os.read", "os.fdopen")
        ):
            return
        target = ast.unparse(first) if first is not None else "a descriptor"
        self.report.add(
            "sandbox",
            f"the candidate calls {qual}({target}){_at(node)}: file descriptors other "
            f"than stdin/stdout/stderr belong to the worker (its result channel); "
            f"print to stdout instead",
            _line(node),
        )

    def _write_mode(self, mode: ast.AST | None) -> bool:
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
            return any(flag in mode.value for flag in "wax+")
        return mode is not None

    def _open(self, node: ast.Call, qual: str) -> None:
        path = _call_argument(node, "file", 0) or _call_argument(node, "path", None)
        if qual == "os.open":
            flags = _call_argument(node, "flags", 1)
            text = ast.unparse(flags) if flags is not None else ""
            write = any(flag in text for flag in ("O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"))
        else:
            write = self._write_mode(_call_argument(node, "mode", 1))
        if isinstance(path, ast.Constant) and isinstance(path.value, int):
            if path.value not in (0, 1, 2):
                self.report.add(
                    "sandbox",
                    f"the candidate opens file descriptor {path.value}{_at(node)}: "
                    f"descriptors other than stdin/stdout/stderr belong to the worker "
                    f"(its result channel); print to stdout instead",
                    _line(node),
                )
            return
        self._path(node, path, write, "open")

    def _path(self, node: ast.AST, path: ast.AST | None, write: bool, what: str) -> None:
        if path is None:
            return
        text = _constant_path(path, self.module)
        line, at = _line(node), _at(node)
        if text is None:
            pieces = [
                inner.value
                for inner in ast.walk(path)
                if isinstance(inner, ast.Constant) and isinstance(inner.value, str)
            ]
            names = {self.qual(inner) for inner in ast.walk(path) if isinstance(inner, (ast.Name, ast.Attribute))}
            suspicious = (
                any(".." in piece or piece.startswith("/") for piece in pieces)
                or bool(names & {"sys.argv", "builtins.__file__", "glob.glob", "os.environ", "inspect.stack"})
                or any(isinstance(inner, ast.Name) and inner.id == "__file__" for inner in ast.walk(path))
            )
            if write:
                self.report.add(
                    "sandbox",
                    f"the candidate writes to a computed path with {what}{at}: write "
                    f"only to constant relative paths inside the working directory",
                    line,
                    confined=True,
                )
            elif suspicious:
                self.report.add(
                    "sandbox",
                    f"the candidate reads `{ast.unparse(path)}` with {what}{at}: "
                    f"reading the problem, the harness or files outside the working "
                    f"directory is rejected",
                    line,
                    confined=True,
                )
            else:
                self.report.add(
                    "sandbox",
                    f"the candidate reads a computed path with {what}{at}; reading "
                    f"the problem, the harness or other files is rejected",
                    line,
                    "note",
                    confined=True,
                )
            return
        lowered = text.lower()
        if lowered.startswith("/proc/") or lowered in ("/dev/mem", "/dev/kmem", "/dev/port"):
            if any(word in lowered for word in ("/mem", "/maps", "/pagemap", "/smaps", "kmem", "/port")):
                self.report.add(
                    "harness-read",
                    f"the candidate opens {text}{at}, the process's memory: "
                    f"reading the harness's state is rejected",
                    line,
                )
                return
            if lowered.startswith(("/proc/cpuinfo", "/proc/meminfo")) and not write:
                return
            self.report.add(
                "sandbox",
                f"the candidate opens {text}{at}: process information is not the " f"candidate's to read; remove it",
                line,
                confined=True,
            )
            return
        if text in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/urandom", "/dev/random"):
            return
        parts = re.split(r"[\\/]", text)
        outside = text.startswith(("/", "~", "\\")) or bool(re.match(r"[A-Za-z]:", text)) or ".." in parts
        if write and outside:
            self.report.add(
                "sandbox",
                f"the candidate writes {text} with {what}{at}, outside the working "
                f"directory: candidates may write only inside their scratch directory",
                line,
                confined=True,
            )
        elif not write and (
            outside
            or text.endswith(".py")
            or any(word in lowered for word in ("problem", "harness", "kforge", "reference"))
        ):
            if text.startswith(("/sys/devices/system/cpu", "/proc/cpuinfo")):
                return
            self.report.add(
                "sandbox",
                f"the candidate reads {text} with {what}{at}: reading the problem, the "
                f"harness or files outside the working directory is rejected",
                line,
                confined=True,
            )

    def _environment(self, node: ast.AST, key: ast.AST | None, write: bool, bulk: bool) -> None:
        line, at = _line(node), _at(node)
        verb = "sets" if write else "reads"
        if bulk:
            self.report.add(
                "sandbox",
                f"the candidate {verb} the whole environment{at}: candidates run with a "
                f"scrubbed environment and may not read or change it; remove it",
                line,
                confined=True,
            )
            return
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            if key.value in self.policy["environment_keys"]:
                self.report.add("sandbox", f"the candidate {verb} the build setting {key.value}{at}", line, "note")
            elif write and (key.value in _INJECTING_ENVIRONMENT or key.value.startswith(_HARNESS_ENVIRONMENT_PREFIXES)):
                self.report.add(
                    "sandbox",
                    f"the candidate sets the environment variable {key.value}{at}: it loads code into the "
                    f"processes the build starts or changes the harness's own settings, which nothing at "
                    f"run time can see; remove it",
                    line,
                )
            elif write and not _SECRET_NAME.search(key.value):
                # PATH to find nvcc, LD_LIBRARY_PATH, a library's own knob: the change stays inside the
                # candidate's process and the processes its build starts, all in the sandbox.
                self.report.add(
                    "sandbox",
                    f"the candidate sets the environment variable {key.value}{at}: the change stays in its "
                    f"own process and the processes its build starts, inside the sandbox",
                    line,
                    "note",
                )
            elif not write and not _SECRET_NAME.search(key.value):
                # A setting looked up by name (KernelBench's ThunderKittens example reads
                # THUNDERKITTENS_ROOT): the environment is an allow-list, so it finds the default.
                self.report.add(
                    "sandbox",
                    f"the candidate reads the environment variable {key.value}{at}: candidates run with an "
                    f"environment reduced to an allow-list (no secrets; HOME and TMPDIR are its scratch folder)",
                    line,
                    "note",
                    confined=True,
                )
            else:
                self.report.add(
                    "sandbox",
                    f"the candidate {verb} the environment variable {key.value}{at}: "
                    f"candidates run with a scrubbed environment and may not read secrets "
                    f"or settings; remove it",
                    line,
                    confined=True,
                )
            return
        self.report.add(
            "sandbox",
            f"the candidate {verb} an environment variable by a computed name{at}: "
            f"candidates may not read or change the environment; remove it",
            line,
            confined=True,
        )

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

    # -- assignments and patches -----------------------------------------------------------

    def _target(self, target: ast.AST, node: ast.AST, value: ast.AST | None) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element, node, None)
        elif isinstance(target, ast.Attribute):
            qual = self.qual(target)
            if qual:
                self._patch(node, qual, value)
        elif isinstance(target, ast.Subscript):
            base = self.qual(target.value)
            if base == "sys.modules":
                self.report.add(
                    "timer-patch",
                    f"the candidate edits sys.modules{_at(node)}: replacing loaded "
                    f"modules patches the harness; remove it",
                    _line(node),
                )
            elif base == "os.environ":
                self._environment(node, target.slice, write=True, bulk=False)
            elif base and base.endswith(".__dict__"):
                self._patch(node, f"{base[: -len('.__dict__')]}.{ast.unparse(target.slice)}", value)
            elif isinstance(target.value, ast.Name) and target.value.id == "__builtins__":
                self._patch(node, "builtins", value)
            elif (
                isinstance(target.value, ast.Call)
                and self.qual(target.value.func) == "builtins.vars"
                and target.value.args
                and self.qual(target.value.args[0])
            ):
                self._patch(node, f"{self.qual(target.value.args[0])}.{ast.unparse(target.slice)}", value)

    def _setattr(self, node: ast.Call) -> None:
        if len(node.args) < 2:
            return
        owner = self.qual(node.args[0])
        if owner is None:
            return
        name = node.args[1]
        attribute = name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else "<computed>"
        self._patch(node, f"{owner}.{attribute}", node.args[2] if len(node.args) > 2 else None)

    def _patch(self, node: ast.AST, qual: str, value: ast.AST | None = None) -> None:
        line, at = _line(node), _at(node)
        if qual in _RUNTIME_STATE_FLAGS:
            shown = f" = {ast.unparse(value)}" if value is not None else ""
            self.report.add(
                "precision" if qual.rsplit(".", 1)[1] in _PRECISION_FLAGS else "global-state",
                f"the candidate sets {qual}{shown}{at}: judged at run time (the worker compares this "
                f"switch before and after the import, the construction, the correctness trials and the "
                f"timed calls, and rejects a change)",
                line,
                "note",
            )
            return
        if qual.startswith("torch.backends."):
            last = qual.rsplit(".", 1)[1]
            lowers = isinstance(value, ast.Constant) and value.value in (True, "tf32", "bf16")
            if last in _PRECISION_FLAGS and lowers:
                self._measured_precision_note(
                    f"sets {qual} = {ast.unparse(value)}{at}, which lets float32 matmuls or convolutions "
                    f"run in reduced precision in its own process",
                    line,
                )
            else:
                self.report.add(
                    "global-state",
                    f"the candidate sets {qual}{at}: a torch switch the run-time snapshot "
                    f"does not read back, so what it changes cannot be judged; remove the "
                    f"assignment",
                    line,
                )
            return
        if qual in ("sys.stdout", "sys.stderr", "sys.dont_write_bytecode"):
            self.report.add("timer-patch", f"the candidate replaces {qual}{at}", line, "note")
            return
        if qual.startswith(_TIMING_TARGETS) or qual.startswith(("time.", "timeit.")):
            self.report.add(
                "timer-patch",
                f"the candidate replaces {qual}{at}: the harness's timing and "
                f"synchronisation functions must stay untouched; remove the "
                f"assignment",
                line,
            )
            return
        what = "the builtin " + qual.split(".", 1)[1] if qual.startswith("builtins.") else qual
        root = qual.split(".", 1)[0]
        if root not in HARNESS_MODULES and not root.startswith("kforge"):
            self.report.add(
                "timer-patch",
                f"the candidate sets {what}{at}: kforge's worker calls nothing of {root}, so the change "
                f"reaches only the candidate's own code",
                line,
                "note",
            )
            return
        if self._adds_a_missing_attribute(node, qual):
            self.report.add(
                "timer-patch",
                f"the candidate adds {what}{at} where it is missing (`if not hasattr(...)`): nothing that "
                f"used it before can see a change",
                line,
                "note",
            )
            return
        self.report.add(
            "timer-patch",
            f"the candidate replaces {what}{at}: a candidate may not modify modules "
            f"it did not define (torch, time, builtins, the harness); remove the "
            f"assignment",
            line,
        )

    def _adds_a_missing_attribute(self, node: ast.AST, qual: str) -> bool:
        """Whether the assignment sits in `if not hasattr(OWNER, "NAME"):` for its own target."""
        owner, _, name = qual.rpartition(".")
        return any(
            isinstance(test, ast.UnaryOp)
            and isinstance(test.op, ast.Not)
            and isinstance(test.operand, ast.Call)
            and self.qual(test.operand.func) == "builtins.hasattr"
            and len(test.operand.args) == 2
            and self.qual(test.operand.args[0]) == owner
            and isinstance(test.operand.args[1], ast.Constant)
            and test.operand.args[1].value == name
            for test in self._branch_tests(node)
        )

    def _sys_modules_method(self, node: ast.Call, method: str) -> None:
        if method in ("pop", "update", "setdefault", "clear", "__setitem__", "__delitem__", "popitem"):
            self.report.add(
                "timer-patch",
                f"the candidate edits sys.modules with .{method}(){_at(node)}: "
                f"replacing loaded modules patches the harness; remove it",
                _line(node),
            )
        else:
            first = node.args[0] if node.args else None
            if (
                method == "get"
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
                and first.value != "__main__"
                and not first.value.startswith("kforge")
            ):
                return
            self.report.add(
                "harness-read",
                f"the candidate searches sys.modules with .{method}(){_at(node)}: "
                f"a candidate may not reach into the harness's modules; remove it",
                _line(node),
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

    def _module_object(self, node: ast.Name | ast.Attribute) -> None:
        """Uses of os.environ and sys.modules, however they were imported."""
        qual = self.qual(node)
        parent = self.module.parents.get(node)
        if qual == "os.environ":
            self._environ_use(node, parent)
        elif qual == "sys.modules" and isinstance(parent, ast.Subscript) and parent.value is node:
            key = parent.slice
            if isinstance(parent.ctx, (ast.Store, ast.Del)):
                return  # reported as an assignment
            if (
                isinstance(key, ast.Constant)
                and isinstance(key.value, str)
                and key.value != "__main__"
                and not key.value.startswith("kforge")
            ):
                return
            if isinstance(key, ast.Name) and key.id == "__name__":
                return
            self.report.add(
                "harness-read",
                f"the candidate looks up `{ast.unparse(parent)}`{_at(node)}: a "
                f"candidate may not reach into the harness's modules; remove it",
                _line(node),
            )
        elif qual == "sys.modules" and not isinstance(parent, ast.Attribute):
            self.report.add(
                "harness-read",
                f"the candidate reads sys.modules{_at(node)}: a candidate may not "
                f"reach into the harness's modules; remove it",
                _line(node),
            )

    def _environ_use(self, node: ast.AST, parent: ast.AST | None) -> None:
        if isinstance(parent, ast.Subscript) and parent.value is node:
            if isinstance(parent.ctx, ast.Load):
                self._environment(node, parent.slice, write=False, bulk=False)
            return  # stores are reported as assignments
        if isinstance(parent, ast.Attribute) and parent.value is node:
            call = self.module.parents.get(parent)
            method = parent.attr
            key = call.args[0] if isinstance(call, ast.Call) and call.args else None
            if method in ("get", "__getitem__", "__contains__"):
                self._environment(node, key, write=False, bulk=False)
            elif method in ("setdefault", "pop", "__setitem__", "__delitem__"):
                self._environment(node, key, write=True, bulk=False)
            elif method == "update" and isinstance(call, ast.Call) and _named_update(call):
                for named in _named_update(call):
                    self._environment(node, named, write=True, bulk=False)
            else:
                self._environment(node, None, write=method in ("update", "clear", "popitem"), bulk=True)
            return
        if isinstance(parent, ast.Compare) and parent.left is not node:
            self._environment(node, parent.left, write=False, bulk=False)
            return
        self._environment(node, None, write=False, bulk=True)

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


def _named_update(call: ast.Call) -> list[ast.AST]:
    """The keys of `os.environ.update({"PATH": ...}, CC=...)` when every one is written out; [] otherwise."""
    keys: list[ast.AST] = []
    for argument in call.args:
        if not isinstance(argument, ast.Dict) or any(key is None for key in argument.keys):
            return []
        keys.extend(key for key in argument.keys if key is not None)
    for keyword in call.keywords:
        if keyword.arg is None:
            return []
        keys.append(ast.Constant(keyword.arg))
    if not all(isinstance(key, ast.Constant) and isinstance(key.value, str) for key in keys):
        return []
    return keys


def _constant_path(node: ast.AST, module: _Module) -> str | None:
    if isinstance(node, ast.Call):
        qual = _qualname(node.func, module.aliases)
        if qual in ("os.path.join", "pathlib.Path", "pathlib.PurePath", "posixpath.join"):
            parts = [_constant_path(argument, module) for argument in node.args]
            return "/".join(parts) if parts and all(part is not None for part in parts) else None
        if qual in (
            "os.path.expanduser",
            "os.path.abspath",
            "os.path.realpath",
            "os.path.normpath",
            "builtins.str",
            "os.fspath",
        ):
            inner = _constant_path(node.args[0], module) if node.args else None
            if inner is not None and qual in ("os.path.abspath", "os.path.realpath"):
                return inner if inner.startswith("/") else inner
            return inner
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _constant_path(node.left, module), _constant_path(node.right, module)
        return f"{left}/{right}" if left is not None and right is not None else None
    segments = _resolve_text(node, module)
    if segments is None:
        return None
    return "".join(text for text, _ in segments)
