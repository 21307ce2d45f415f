"""The candidate module's symbol table: import aliases, qualified names and constant strings (the
text of sources handed to load_inline is resolved in source_text.py).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from .compute_names import _EXTENSION_BUILDERS
from .names import _BUILTIN_NAMES


# ---------------------------------------------------------------------------------------------
# Module symbol table
# ---------------------------------------------------------------------------------------------


@dataclass
class _Module:
    tree: ast.Module
    parents: dict[ast.AST, ast.AST]
    aliases: dict[str, str]
    string_defs: dict[str, list[tuple[str, ast.expr]]]
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
    classes: dict[str, ast.ClassDef]
    ext_names: set[str] = field(default_factory=set)
    ext_functions: set[str] = field(default_factory=set)
    kernel_names: set[str] = field(default_factory=set)
    jit_kernels: set[str] = field(default_factory=set)
    reference_names: set[str] = field(default_factory=set)
    builders: list[ast.Call] = field(default_factory=list)
    local_names: set[str] = field(default_factory=set)


def _import_aliases(tree: ast.Module) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    aliases[root] = root
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if alias.name != "*":
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _module_bound_names(tree: ast.Module) -> set[str]:
    """Names the module binds at its top level: imports, definitions and assignments (also inside
    its top-level if/for/while/with/try blocks), not those local to functions and classes."""
    bound: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*")
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        if isinstance(node, ast.Lambda):
            continue
        pending.extend(ast.iter_child_nodes(node))
    return bound


def _inherit_aliases(aliases: dict[str, str], tree: ast.Module, inherited: Mapping[str, str]) -> bool:
    """Adds the problem's import aliases that the candidate does not bind itself (KernelBench runs a
    candidate in the namespace of its problem, so `torch` or `nn` may come from there); True when
    the candidate leaves `Model` to the problem too."""
    bound = _module_bound_names(tree)
    for name, qual in inherited.items():
        if name not in bound:
            aliases.setdefault(name, qual)
    return "Model" not in bound


def _qualname(
    node: ast.AST | None,
    aliases: Mapping[str, str],
    local: Mapping[str, str] | None = None,
    shadowed: Iterable[str] = (),
) -> str | None:
    """Dotted name of an expression rooted in an imported module (``F.relu`` → torch.nn.functional.relu)."""
    if isinstance(node, ast.Name):
        if local is not None and node.id in local:
            return local[node.id]
        if node.id in aliases:
            return aliases[node.id]
        if node.id in _BUILTIN_NAMES and node.id not in shadowed:
            return f"builtins.{node.id}"
        return None
    if isinstance(node, ast.Attribute):
        base = _qualname(node.value, aliases, local, shadowed)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Call):
        func = _qualname(node.func, aliases, local, shadowed)
        constant = _fold_string(node.args[1]) if func == "builtins.getattr" and len(node.args) >= 2 else None
        if constant is not None:
            base = _qualname(node.args[0], aliases, local, shadowed)
            return f"{base}.{constant}" if base else None
        if func in ("importlib.import_module", "builtins.__import__") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                return first.value
        return None
    if isinstance(node, ast.Subscript):
        if _qualname(node.value, aliases, local, shadowed) == "sys.modules":
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value != "__main__":
                return key.value
    return None


def _fold_string(node: ast.AST, depth: int = 0) -> str | None:
    """A string built only from constants ("re" + "lu", f"{'re'}lu", "".join([...]))."""
    if depth > 20:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _fold_string(node.left, depth + 1), _fold_string(node.right, depth + 1)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            inner = value.value if isinstance(value, ast.FormattedValue) else value
            folded = _fold_string(inner, depth + 1)
            if folded is None:
                return None
            parts.append(folded)
        return "".join(parts)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and len(node.args) == 1
        and isinstance(node.args[0], (ast.List, ast.Tuple))
    ):
        separator = _fold_string(node.func.value, depth + 1)
        items = [_fold_string(item, depth + 1) for item in node.args[0].elts]
        if separator is not None and all(item is not None for item in items):
            return separator.join(items)  # type: ignore[arg-type]
    return None


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    return parents


def _decorator_names(node: ast.AST, module: _Module) -> list[str]:
    names = []
    for decorator in getattr(node, "decorator_list", []):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        names.append(_qualname(target, module.aliases) or "")
    return names


def _string_list(node: ast.AST | None) -> list[str]:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [item.value for item in node.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    return []


def _call_argument(call: ast.Call, keyword: str, position: int | None) -> ast.expr | None:
    for item in call.keywords:
        if item.arg == keyword:
            return item.value
    if position is not None and len(call.args) > position:
        return call.args[position]
    return None


def _is_extension_expr(node: ast.AST, module: _Module) -> bool:
    if isinstance(node, ast.Call):
        qual = _qualname(node.func, module.aliases)
        if qual in _EXTENSION_BUILDERS:
            return True
        if isinstance(node.func, ast.Name) and node.func.id in module.ext_functions:
            return True
        return False
    if isinstance(node, ast.Name):
        return node.id in module.ext_names
    if isinstance(node, ast.BoolOp):
        return any(_is_extension_expr(value, module) for value in node.values)
    if isinstance(node, ast.IfExp):
        return _is_extension_expr(node.body, module) or _is_extension_expr(node.orelse, module)
    return False


def _collect_strings(module: _Module) -> None:
    """Remember every assignment to a name whose value may be a string, per scope-free name."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    module.string_defs.setdefault(target.id, []).append(("=", node.value))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            module.string_defs.setdefault(node.target.id, []).append(("=", node.value))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and isinstance(node.op, ast.Add):
            module.string_defs.setdefault(node.target.id, []).append(("+=", node.value))
