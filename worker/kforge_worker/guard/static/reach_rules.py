"""Imports and calls that reach outside the candidate: the network, processes, the harness's own
modules and state, raw memory, shared libraries, code built at run time (`sandbox`,
`harness-read`, `library-policy`, `timer-patch`, `deferred-work`), for _ModuleChecker."""

from __future__ import annotations

import ast

from .report import _at, _line
from .sandbox_names import (
    _CONCURRENCY_MODULES,
    _DYNAMIC_CODE,
    _HARNESS_READ_CALLS,
    _NETWORK_MODULES,
    _PROCESS_MODULES,
    _SUBPROCESS_CALLS,
    _SUBPROCESS_PREFIXES,
)


class _ReachRules:
    """Rules on imports and on calls that reach outside the candidate (a mixin of _ModuleChecker)."""

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

    def _call_reaching_out(self, node: ast.Call, qual: str, label: str) -> bool:
        """Calls that reach outside the candidate: the harness's state, raw memory, libraries,
        processes, the network, code built at run time, imports by name. False when none applies."""
        return self._call_reading_harness(node, qual, label) or self._call_running_code(node, qual, label)

    def _call_reading_harness(self, node: ast.Call, qual: str, label: str) -> bool:
        """Calls that read the harness's state or raw memory, or load a library. False when none applies."""
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
        else:
            return False
        return True

    def _call_running_code(self, node: ast.Call, qual: str, label: str) -> bool:
        """Calls that start processes, open the network, run code built at run time or import a
        module by name. False when none applies."""
        line, at = _line(node), _at(node)
        if qual in _SUBPROCESS_CALLS or qual.startswith(_SUBPROCESS_PREFIXES):
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
