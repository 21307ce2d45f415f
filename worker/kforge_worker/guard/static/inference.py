"""Type inference, just enough to tell tensors from extensions, lists and modules: the kind of an
expression (`_kind`) and of a function's local names (`_infer_locals`). The kinds of calls of
imported names are in call_kinds.py, the module's symbol table in module_table.py.
"""

from __future__ import annotations

import ast
from typing import Iterator

from .call_kinds import _qualified_call_kind
from .compute_names import _SCALAR_METHODS
from .context import _Ctx, _FunctionNode


def _call_kind(node: ast.Call, ctx: _Ctx) -> str | None:
    module = ctx.module
    if isinstance(node.func, ast.Name) and node.func.id in module.reference_names:
        return "reference"  # the problem's Model, imported under any name
    qual = ctx.qual(node.func)
    if qual:
        return _qualified_call_kind(qual, node, ctx)
    func = node.func
    if isinstance(func, ast.Name):
        if func.id in module.ext_functions:
            return "ext"
        if func.id in module.reference_names:
            return "reference"
        if func.id in module.classes:
            return f"instance:{func.id}"
        if ctx.kinds.get(func.id) == "kernel":
            return "tensor"
        return None
    if isinstance(func, ast.Attribute):
        receiver = _kind(func.value, ctx)
        method = func.attr
        if receiver in ("ext", "kernel"):
            return "tensor"
        if receiver == "tensor":
            if method == "tolist":
                return "list"
            if method in _SCALAR_METHODS:
                return "number"
            return "tensor"
        if receiver == "container" and method in ("get", "pop", "setdefault"):
            return "cached"
        if receiver is None and method in module.kernel_names:
            return "tensor"
        if receiver == "class" or (receiver or "").startswith("class:"):
            return "tensor" if method == "apply" else None
        return None
    return None


def _kind(node: ast.AST | None, ctx: _Ctx) -> str | None:
    """A coarse kind: tensor, ext, kernel, list, container, cached, number, str, torch-module, ..."""
    if isinstance(node, ast.Name):
        return _name_kind(node, ctx)
    if isinstance(node, ast.Attribute):
        return _attribute_kind(node, ctx)
    if isinstance(node, ast.Call):
        return _call_kind(node, ctx)
    if isinstance(node, ast.Subscript):
        base = _kind(node.value, ctx)
        if base == "tensor":
            return "tensor"
        if base == "container":
            return "cached"
        if base == "torch-module-list":
            return "torch-module"
        return None
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.MatMult):
            return "tensor"
        kinds = (_kind(node.left, ctx), _kind(node.right, ctx))
        if "tensor" in kinds:
            return "tensor"
        if "list" in kinds:
            return "list"
        return "str" if "str" in kinds else None
    if isinstance(node, ast.UnaryOp):
        return _kind(node.operand, ctx)
    if isinstance(node, ast.IfExp):
        return _kind(node.body, ctx) or _kind(node.orelse, ctx)
    if isinstance(node, (ast.List, ast.ListComp, ast.GeneratorExp, ast.Tuple)):
        return "list"
    if isinstance(node, (ast.Dict, ast.DictComp, ast.Set, ast.SetComp)):
        return "container"
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return "str"
        if isinstance(node.value, (int, float, complex)) and not isinstance(node.value, bool):
            return "number"
    if isinstance(node, ast.JoinedStr):
        return "str"
    return None


def _name_kind(node: ast.Name, ctx: _Ctx) -> str | None:
    module = ctx.module
    if node.id == ctx.self_name:
        return "self"
    if node.id in ctx.kinds:
        return ctx.kinds[node.id]
    if node.id in module.ext_names:
        return "ext"
    if node.id in module.jit_kernels:
        return "jit-kernel"
    if node.id in module.reference_names:
        return "reference-class"
    if node.id in module.classes:
        return f"class:{node.id}"
    return None


def _attribute_kind(node: ast.Attribute, ctx: _Ctx) -> str | None:
    if isinstance(node.value, ast.Name) and node.value.id == ctx.self_name and ctx.cls:
        return ctx.cls.attr_kinds.get(node.attr)
    base = _kind(node.value, ctx)
    if base == "tensor":
        return "tensor" if node.attr in ("T", "mT", "H", "mH", "data", "real", "imag", "grad") else None
    if base == "ext":
        return "kernel"
    if base == "torch-module" and node.attr in (
        "weight",
        "bias",
        "running_mean",
        "running_var",
        "in_proj_weight",
        "in_proj_bias",
    ):
        return "tensor"
    return None


def _bind(target: ast.AST, kind: str | None, value: ast.AST | None, ctx: _Ctx) -> None:
    if isinstance(target, ast.Name):
        if kind and ctx.kinds.get(target.id) != "tensor":
            ctx.kinds[target.id] = kind
    elif isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            for element, item in zip(target.elts, value.elts):
                _bind(element, _kind(item, ctx), item, ctx)
        elif kind in ("tensor", "list"):
            for element in target.elts:
                _bind(element, "tensor" if kind == "tensor" else None, None, ctx)
    elif isinstance(target, ast.Starred):
        _bind(target.value, kind, None, ctx)


def _walk(node: ast.AST, skip: tuple[type, ...] = (ast.ClassDef,)) -> Iterator[ast.AST]:
    """Like :func:`ast.walk`, without descending into nested nodes of the ``skip`` types."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if not isinstance(child, skip):
                stack.append(child)


def _alias_target(value: ast.AST, ctx: _Ctx) -> str | None:
    """The imported thing an expression names: ``torch.matmul``, ``getattr(F, "relu")``,
    ``functools.partial(F.relu, ...)``; ``None`` for anything else."""
    if isinstance(value, ast.Call):
        func = ctx.qual(value.func)
        if func == "functools.partial" and value.args:
            return _alias_target(value.args[0], ctx)
        if func not in ("builtins.getattr", "importlib.import_module", "builtins.__import__"):
            return None
    elif not isinstance(value, (ast.Name, ast.Attribute)):
        return None
    qual = ctx.qual(value)
    if qual is None or qual.startswith("builtins."):
        return None
    return qual


def _infer_locals(function: _FunctionNode, ctx: _Ctx, nodes: list[ast.AST] | None = None) -> None:
    nodes = nodes if nodes is not None else list(_walk(function))
    for _ in range(2):
        for node in nodes:
            if isinstance(node, ast.Assign):
                kind = _kind(node.value, ctx)
                for target in node.targets:
                    _bind(target, kind, node.value, ctx)
                    if isinstance(target, ast.Name) and kind is None:
                        qual = _alias_target(node.value, ctx)
                        if qual:
                            ctx.aliases[target.id] = qual
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                _bind(node.target, _kind(node.value, ctx), node.value, ctx)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                iterable = _kind(node.iter, ctx)
                if iterable == "tensor":
                    _bind(node.target, "tensor", None, ctx)
                elif iterable == "torch-module-list":
                    _bind(node.target, "torch-module", None, ctx)
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                _bind(node.optional_vars, _kind(node.context_expr, ctx), None, ctx)
