"""Global state and precision in the whole module: seeds, the switches the run-time snapshot reads,
matmul precision, tl.dot's TF32 and casts below the run precision (`global-state`, `precision`),
for _ModuleChecker."""

from __future__ import annotations

import ast

from .names import _DTYPE_NAMES, _RANK, _RUNTIME_STATE_CALLS, _SEED_CALLS
from .report import _at, _line, measured_precision_note
from .symbols import _Module, _call_argument, _qualname

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


class _PrecisionRules:
    """Rules on global state and precision (a mixin of _ModuleChecker)."""

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
