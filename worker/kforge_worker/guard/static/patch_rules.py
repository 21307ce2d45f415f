"""Assignments and patches: what the candidate rebinds in torch, the harness or sys.modules
(`timer-patch`), for _ModuleChecker."""

from __future__ import annotations

import ast

from .names import _PRECISION_FLAGS, _RUNTIME_STATE_FLAGS
from .sandbox_names import _TIMING_TARGETS
from .report import _at, _line


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


class _PatchRules:
    """Rules on assignment targets, setattr, sys.modules and module objects (a mixin of
    _ModuleChecker)."""

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
        if self._torch_switch(node, qual, value):
            return
        line, at = _line(node), _at(node)
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

    def _torch_switch(self, node: ast.AST, qual: str, value: ast.AST | None) -> bool:
        """An assignment to a torch.backends switch: a note when the run-time snapshot reads it back,
        else a rejection (a precision note for a switch that lowers float32). False for other targets."""
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
            return True
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
            return True
        return False

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
