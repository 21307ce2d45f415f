"""The candidate's symbol table (`_build_module`: its functions, classes, aliases, extensions and
the reference it imports) and what the guard knows of each class (`_class_info`)."""

from __future__ import annotations

import ast
from typing import Mapping

from ...backends.registry import JIT_DECORATORS
from .compute_names import _EXTENSION_BUILDERS
from .context import _ClassInfo, _Ctx
from .inference import _alias_target, _infer_locals, _kind, _walk
from .symbols import (
    _Module,
    _call_argument,
    _collect_strings,
    _decorator_names,
    _import_aliases,
    _inherit_aliases,
    _is_extension_expr,
    _parents,
    _qualname,
    _string_list,
)


def _class_info(module: _Module, name: str, cache: dict[str, _ClassInfo]) -> _ClassInfo | None:
    if name in cache:
        return cache[name]
    node = module.classes.get(name)
    if node is None:
        return None
    info = _ClassInfo(node=node, methods={})
    cache[name] = info
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            info.methods[item.name] = item
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in module.classes and base.id not in module.reference_names:
            parent = _class_info(module, base.id, cache)
            if parent:
                for method_name, method in parent.methods.items():
                    info.methods.setdefault(method_name, method)
                for attr, kind in parent.attr_kinds.items():
                    info.attr_kinds.setdefault(attr, kind)
    class_ctx = _Ctx(module=module, cls=None, self_name=None)
    for item in node.body:
        if isinstance(item, ast.Assign):
            qual = _alias_target(item.value, class_ctx)
            for target in item.targets:
                if qual and isinstance(target, ast.Name):
                    info.attr_aliases[target.id] = qual
    for method in sorted(info.methods.values(), key=lambda fn: fn.name != "__init__"):
        _method_attributes(module, info, method)
    return info


def _method_attributes(module: _Module, info: _ClassInfo, method: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """Records in `info` the kinds, qualified names and aliases of the attributes `method` sets on
    self (``self.w = nn.Parameter(...)``, ``self.register_buffer("b", ...)``)."""
    self_name = method.args.args[0].arg if method.args.args else None
    ctx = _Ctx(module=module, cls=info, self_name=self_name)
    nodes = list(_walk(method))
    _infer_locals(method, ctx, nodes)
    for inner in nodes:
        pairs: list[tuple[str, ast.AST]] = []
        if isinstance(inner, ast.Assign):
            pairs = [
                (target.attr, inner.value)
                for target in inner.targets
                if isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == self_name
            ]
        elif (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and inner.func.attr in ("register_buffer", "register_parameter")
            and inner.args
        ):
            label = inner.args[0]
            if isinstance(label, ast.Constant) and isinstance(label.value, str):
                info.attr_kinds.setdefault(label.value, "tensor")
        for attr, value in pairs:
            alias = _alias_target(value, ctx)
            if alias:
                info.attr_aliases.setdefault(attr, alias)
            kind = _kind(value, ctx)
            if kind is None and isinstance(value, ast.Attribute) and _kind(value.value, ctx) == "ext":
                kind = "kernel"
            if kind and (attr not in info.attr_kinds or kind == "tensor"):
                info.attr_kinds[attr] = kind
                if isinstance(value, ast.Call):
                    info.attr_quals[attr] = ctx.qual(value.func) or ast.unparse(value.func)


def _build_module(tree: ast.Module, inherited: Mapping[str, str] | None = None) -> _Module:
    """The candidate's symbol table; `inherited`: the problem's import aliases, which a candidate
    may use without importing (symbols._inherit_aliases)."""
    module = _Module(
        tree=tree, parents=_parents(tree), aliases=_import_aliases(tree), string_defs={}, functions={}, classes={}
    )
    inherits_model = inherited is not None and _inherit_aliases(module.aliases, tree, inherited)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            module.functions[node.name] = node
            module.local_names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            module.classes[node.name] = node
            module.local_names.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    module.functions[target.id] = node.value  # type: ignore[assignment]
                    module.local_names.add(target.id)
    # Module-level aliases of imported things (``mm = torch.matmul``), twice for chains.
    for _ in range(2):
        module_ctx = _Ctx(module=module, cls=None, self_name=None)
        for node in tree.body:
            if isinstance(node, ast.Assign):
                qual = _alias_target(node.value, module_ctx)
                for target in node.targets:
                    if qual and isinstance(target, ast.Name):
                        module.aliases[target.id] = qual
    _find_extensions(module, tree)
    _find_reference(module, inherits_model)
    _collect_strings(module)
    return module


def _find_extensions(module: _Module, tree: ast.Module) -> None:
    """The extensions the module builds, the names and functions bound to them, its JIT kernels."""
    all_nodes = list(ast.walk(tree))
    assignments = [node for node in all_nodes if isinstance(node, ast.Assign)]
    for node in all_nodes:
        if isinstance(node, ast.Call):
            qual = _qualname(node.func, module.aliases)
            if qual in _EXTENSION_BUILDERS:
                module.builders.append(node)
                module.kernel_names.update(_string_list(_call_argument(node, "functions", 3)))
    # Names and functions bound to built extensions.
    for _ in range(2):
        for node in assignments:
            if _is_extension_expr(node.value, module):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        module.ext_names.add(target.id)
        for name, function in module.functions.items():
            for inner in ast.walk(function):
                if (
                    isinstance(inner, ast.Return)
                    and inner.value is not None
                    and _is_extension_expr(inner.value, module)
                ):
                    module.ext_functions.add(name)
    for name, function in module.functions.items():
        if any(qual.startswith(JIT_DECORATORS) for qual in _decorator_names(function, module)):
            module.jit_kernels.add(name)


def _find_reference(module: _Module, inherits_model: bool) -> None:
    # The reference is a `Model` the candidate imports (under any name: `from problem import Model as
    # Ref`) or takes from the problem's namespace; a class or function the candidate defines itself
    # shadows it and is judged as the candidate's own code, like any other (docs/guard.md).
    module.reference_names.update(
        name
        for name, qual in module.aliases.items()
        if qual.rsplit(".", 1)[-1] == "Model" and name != "Model" and name not in module.local_names
    )
    if "Model" in module.aliases and "Model" not in module.classes and "Model" not in module.functions:
        module.reference_names.add("Model")
    if inherits_model:
        module.reference_names.add("Model")
