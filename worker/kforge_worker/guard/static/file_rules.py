"""Files, descriptors and the environment: what the candidate reads or writes outside its own
memory (`sandbox`, `harness-read`), for _ModuleChecker."""

from __future__ import annotations

import ast
import re

from .sandbox_names import _HARNESS_ENVIRONMENT_PREFIXES, _INJECTING_ENVIRONMENT
from .report import _at, _line
from .source_text import _resolve_text
from .symbols import _Module, _call_argument, _qualname

#: Names that hold credentials: reading one is a rejection even though the sandbox leaves it unset.
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)


class _FileRules:
    """Rules on open, paths, descriptors and os.environ (a mixin of _ModuleChecker)."""

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
        if text is None:
            self._computed_path(node, path, write, what)
            return
        if self._system_path(node, text, write):
            return
        line, at = _line(node), _at(node)
        lowered = text.lower()
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

    def _computed_path(self, node: ast.AST, path: ast.AST, write: bool, what: str) -> None:
        """A path the guard cannot fold to a constant: a write is rejected, a read a note unless it
        looks outside the working directory."""
        line, at = _line(node), _at(node)
        pieces = [
            inner.value for inner in ast.walk(path) if isinstance(inner, ast.Constant) and isinstance(inner.value, str)
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

    def _system_path(self, node: ast.AST, text: str, write: bool) -> bool:
        """/proc and /dev paths: the process's memory, process information, the harmless devices.
        True when `text` is one of them (reported or allowed)."""
        line, at = _line(node), _at(node)
        lowered = text.lower()
        if lowered.startswith("/proc/") or lowered in ("/dev/mem", "/dev/kmem", "/dev/port"):
            if any(word in lowered for word in ("/mem", "/maps", "/pagemap", "/smaps", "kmem", "/port")):
                self.report.add(
                    "harness-read",
                    f"the candidate opens {text}{at}, the process's memory: "
                    f"reading the harness's state is rejected",
                    line,
                )
                return True
            if lowered.startswith(("/proc/cpuinfo", "/proc/meminfo")) and not write:
                return True
            self.report.add(
                "sandbox",
                f"the candidate opens {text}{at}: process information is not the " f"candidate's to read; remove it",
                line,
                confined=True,
            )
            return True
        return text in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/urandom", "/dev/random")

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
            self._environment_variable(key.value, write, verb, line, at)
            return
        self.report.add(
            "sandbox",
            f"the candidate {verb} an environment variable by a computed name{at}: "
            f"candidates may not read or change the environment; remove it",
            line,
            confined=True,
        )

    def _environment_variable(self, name: str, write: bool, verb: str, line: int | None, at: str) -> None:
        """A read or write of the environment variable `name`, written out."""
        if name in self.policy["environment_keys"]:
            self.report.add("sandbox", f"the candidate {verb} the build setting {name}{at}", line, "note")
        elif write and (name in _INJECTING_ENVIRONMENT or name.startswith(_HARNESS_ENVIRONMENT_PREFIXES)):
            self.report.add(
                "sandbox",
                f"the candidate sets the environment variable {name}{at}: it loads code into the "
                f"processes the build starts or changes the harness's own settings, which nothing at "
                f"run time can see; remove it",
                line,
            )
        elif write and not _SECRET_NAME.search(name):
            # PATH to find nvcc, LD_LIBRARY_PATH, a library's own knob: the change stays inside the
            # candidate's process and the processes its build starts, all in the sandbox.
            self.report.add(
                "sandbox",
                f"the candidate sets the environment variable {name}{at}: the change stays in its "
                f"own process and the processes its build starts, inside the sandbox",
                line,
                "note",
            )
        elif not write and not _SECRET_NAME.search(name):
            # A setting looked up by name (KernelBench's ThunderKittens example reads
            # THUNDERKITTENS_ROOT): the environment is an allow-list, so it finds the default.
            self.report.add(
                "sandbox",
                f"the candidate reads the environment variable {name}{at}: candidates run with an "
                f"environment reduced to an allow-list (no secrets; HOME and TMPDIR are its scratch folder)",
                line,
                "note",
                confined=True,
            )
        else:
            self.report.add(
                "sandbox",
                f"the candidate {verb} the environment variable {name}{at}: "
                f"candidates run with a scrubbed environment and may not read secrets "
                f"or settings; remove it",
                line,
                confined=True,
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
