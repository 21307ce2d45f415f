"""Entry points: analyze, analyze_file, rejections and the command line.
"""

from __future__ import annotations

import ast
import json
import sys
from typing import Any, Iterable, Mapping

from ..policy import load_policy
from .forward_walker import _ForwardWalker
from .context import _ClassInfo
from .module_table import _build_module, _class_info
from .module_checker import _ModuleChecker
from .native import _NativeScanner
from .native_sources import _native_sources
from .report import _Report, _at, _line
from .symbols import _import_aliases, _Module


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def _own_code(node: ast.AST, module: _Module) -> bool:
    """`node` names a function or class the candidate defines (`_forward`, `Model.forward` of its own
    Model), not the reference's."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in module.local_names and node.id not in module.reference_names


def _model_new_binding(module: _Module) -> ast.Assign | None:
    """The last top-level `ModelNew = ...` of a candidate that defines no class ModelNew."""
    found = None
    for node in module.tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ModelNew" for t in node.targets):
            found = node
    return found


def _check_model_new(module: _Module, report: _Report, classes: dict[str, _ClassInfo]) -> _ClassInfo | None:
    """The class judged as ModelNew: `class ModelNew`, or the candidate's own class that `ModelNew = X`
    names (its own `Model` too: a file's definitions shadow the problem's names). ModelNew bound to
    the reference (imported, taken from the problem's namespace, `problem.Model`) is rejected."""
    name = "ModelNew" if "ModelNew" in module.classes else _bound_model_new(module, report)
    if name is None:
        return None
    info = _class_info(module, name, classes)
    if info is None:
        return None
    if "forward" not in info.methods:
        _check_missing_forward(module, report, info, "ModelNew" if name == "ModelNew" else f"ModelNew ({name})")
    return info


def _bound_model_new(module: _Module, report: _Report) -> str | None:
    """The candidate's own class that `ModelNew = X` names, or None; reports a ModelNew bound to or
    imported as the reference."""
    name = "ModelNew"
    node = _model_new_binding(module)
    if node is not None:
        value = ast.unparse(node.value)
        own = (
            isinstance(node.value, ast.Name)
            and node.value.id in module.classes
            and node.value.id not in module.reference_names
        )
        unbound_model = (
            isinstance(node.value, ast.Name) and node.value.id == "Model" and "Model" not in module.local_names
        )
        if own:
            name = node.value.id
        elif (
            isinstance(node.value, ast.Name)
            and node.value.id in module.reference_names
            or unbound_model
            or isinstance(node.value, ast.Attribute)
            and node.value.attr == "Model"
        ):
            report.add(
                "silent-fallback",
                f"ModelNew is the reference Model ({value}){_at(node)}: define "
                f"a ModelNew whose forward runs the candidate's kernel",
                _line(node),
                definitive=True,
            )
    imported = module.aliases.get("ModelNew", "")
    if imported.endswith(".Model") and name == "ModelNew":
        report.add(
            "silent-fallback",
            f"ModelNew is imported as the reference {imported}: define a ModelNew "
            f"whose forward runs the candidate's kernel",
            None,
            definitive=True,
        )
    return None if name == "ModelNew" else name


def _inherits_reference(module: _Module, class_node: ast.ClassDef, depth: int = 0) -> bool:
    for base in class_node.bases:
        if isinstance(base, ast.Name) and base.id in module.reference_names:
            return True
        if (
            isinstance(base, ast.Name)
            and base.id in module.classes
            and depth < 8
            and _inherits_reference(module, module.classes[base.id], depth + 1)
        ):
            return True
    return False


def _check_missing_forward(module: _Module, report: _Report, info: _ClassInfo, shown: str) -> None:
    """A ModelNew without a forward method of its own: bound to a function, inherited, or none."""
    node = info.node
    bound = [
        item
        for item in node.body
        if isinstance(item, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "forward" for t in item.targets)
    ]
    if bound and _own_code(bound[0].value, module):
        report.add(
            "silent-fallback",
            f"{shown}.forward is bound to {ast.unparse(bound[0].value)}{_at(bound[0])}, the "
            f"candidate's own code: judged by what runs",
            _line(bound[0]),
            "note",
        )
    elif bound:
        report.add(
            "silent-fallback",
            f"{shown}.forward is bound to {ast.unparse(bound[0].value)}"
            f"{_at(bound[0])}: define a forward that runs the candidate's kernel",
            _line(bound[0]),
            definitive=True,
        )
    elif _inherits_reference(module, node):
        report.add(
            "silent-fallback",
            f"{shown} inherits forward from the reference Model{_at(node)}: define "
            f"a forward that runs the candidate's kernel",
            _line(node),
            definitive=True,
        )
    else:
        report.add(
            "silent-fallback",
            f"{shown} defines no forward{_at(node)}: define one that runs the " f"candidate's kernel",
            _line(node),
            definitive=True,
        )


def analyze(
    candidate_source: str,
    policy: str | Mapping[str, Any] | None = None,
    *,
    precision: str = "fp32",
    backend: str | None = None,
    problem_source: str | None = None,
) -> list[dict[str, Any]]:
    """Check a candidate's source; return findings ``{check, severity, message, line}``.

    ``policy`` is a policy name, JSON text or dict (see :mod:`kforge_worker.guard.policy`).
    ``precision`` is the run precision (``fp32``/``fp16``/``bf16``), which decides what counts as a
    downgrade. ``backend`` (a name of backends/registry.py) is recorded for callers and does not change
    the checks: every source is checked the same way. ``problem_source``: the problem file's text,
    whose imports and ``Model`` the candidate may use without importing them (it runs in a namespace
    that starts with the problem's names, as under KernelBench's harness). Nothing in the candidate
    is executed.
    """
    del backend
    resolved = load_policy(policy)
    report = _Report(resolved)
    tree = _parse(candidate_source, report)
    if tree is None:
        return report.finish()
    try:
        _check_module(tree, report, resolved, precision, problem_source)
    except RecursionError:
        report.add(
            "guard-error", "the candidate is nested too deeply for the guard to analyse: simplify the " "code", None
        )
    return report.finish()


def _parse(candidate_source: str, report: _Report) -> ast.Module | None:
    """The candidate's syntax tree, or None after reporting why it does not parse."""
    try:
        return ast.parse(candidate_source)
    except (SyntaxError, ValueError) as error:
        line = getattr(error, "lineno", None)
        detail = getattr(error, "msg", None) or str(error)
        report.add(
            "syntax",
            f"the candidate is not valid Python ({detail}" f"{f', line {line}' if line else ''}): fix the syntax error",
            line,
            "note",
        )
    except RecursionError:
        report.add("guard-error", "the candidate is nested too deeply to parse: simplify the code", None)
    return None


def _check_module(
    tree: ast.Module, report: _Report, resolved: Mapping[str, Any], precision: str, problem_source: str | None
) -> None:
    """Every check on a parsed candidate: ModelNew and its forward, the whole module, native sources."""
    module = _build_module(tree, _problem_imports(problem_source))
    sources, flags = _native_sources(module)
    scanner = _NativeScanner(report, resolved, precision)
    for source in sources:
        module.kernel_names |= scanner.kernel_names(source)
    classes: dict[str, _ClassInfo] = {}
    info = _check_model_new(module, report, classes)
    walker = _ForwardWalker(module, report, resolved, classes)
    if info is not None:
        walker.run(info)
    _ModuleChecker(module, report, resolved, precision).run()
    for call, keyword, text in flags:
        scanner.flags(call, keyword, text)
    for source in sources:
        scanner.scan(source)
    if info is not None and walker.kernel_calls == 0 and (module.builders or module.jit_kernels):
        first = module.builders[0] if module.builders else module.functions[sorted(module.jit_kernels)[0]]
        report.add(
            "torch-fallback",
            f"the candidate builds a kernel{_at(first)} but forward never calls it: "
            f"the work must run in the candidate's own kernel",
            _line(first),
            "note",
        )


def _problem_imports(problem_source: str | None) -> dict[str, str] | None:
    """The problem's import aliases (``{"nn": "torch.nn"}``); {} when it does not parse (its load
    reports that), None without a problem."""
    if problem_source is None:
        return None
    try:
        return _import_aliases(ast.parse(problem_source))
    except (SyntaxError, ValueError, RecursionError):
        return {}


def rejections(findings: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The ``reject`` findings as verdict reasons (docs/spec.md section 3) ``{check, message}``."""
    return [{"check": item["check"], "message": item["message"]} for item in findings if item["severity"] == "reject"]


def analyze_file(
    path: str,
    policy: str | Mapping[str, Any] | None = None,
    *,
    precision: str = "fp32",
    problem_path: str | None = None,
) -> list[dict[str, Any]]:
    """:func:`analyze` on a file read as UTF-8 (undecodable bytes become a ``syntax`` finding), with
    the problem file at ``problem_path`` (when given and readable) as its ``problem_source``."""
    with open(path, "rb") as handle:
        raw = handle.read()
    problem_source = None
    if problem_path is not None:
        try:
            with open(problem_path, "rb") as handle:
                problem_source = handle.read().decode("utf-8", errors="replace")
        except OSError:
            problem_source = ""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return [
            {
                "check": "syntax",
                "severity": "note",
                "line": None,
                "message": f"the candidate is not UTF-8 text (byte {error.start}): save it as UTF-8",
            }
        ]
    return analyze(text, policy, precision=precision, problem_source=problem_source)


def main(argv: list[str] | None = None) -> int:
    """``python -m kforge_worker.guard.static FILE [POLICY] [PRECISION]``: print findings as JSON."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m kforge_worker.guard.static CANDIDATE.py [POLICY] [PRECISION]", file=sys.stderr)
        return 2
    findings = analyze_file(args[0], args[1] if len(args) > 1 else None, precision=args[2] if len(args) > 2 else "fp32")
    print(json.dumps(findings, indent=2))
    return 1 if rejections(findings) else 0
