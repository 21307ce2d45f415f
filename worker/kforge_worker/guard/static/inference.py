"""Type inference, just enough to tell tensors from extensions, lists and modules; the module's
symbol table is built here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

from ...backends.registry import JIT_DECORATORS
from .compute_names import (
    COMPUTE_TENSOR_METHODS,
    _EXTENSION_BUILDERS,
    _NN_CONTAINERS,
    _NN_NOT_COMPUTE,
    _PHASE_CALLS,
    _SCALAR_METHODS,
    _TORCH_COMPILERS,
    _TORCH_COMPUTE_PREFIXES,
)
from .names import _CONTAINER_FACTORIES, _GLOBAL_STATE_CALLS, _PRECISION_CALLS
from .sandbox_names import _SIDE_STREAM_CALLS
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


# ---------------------------------------------------------------------------------------------
# Type inference (just enough to tell tensors from extensions, lists and modules)
# ---------------------------------------------------------------------------------------------

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass
class _ClassInfo:
    node: ast.ClassDef
    methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
    attr_kinds: dict[str, str] = field(default_factory=dict)
    attr_quals: dict[str, str] = field(default_factory=dict)
    attr_aliases: dict[str, str] = field(default_factory=dict)


@dataclass
class _Ctx:
    module: _Module
    cls: _ClassInfo | None
    self_name: str | None
    kinds: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)

    def qual(self, node: ast.AST) -> str | None:
        found = _qualname(node, self.module.aliases, self.aliases, self.module.local_names)
        if found is None and self.cls is not None and isinstance(node, ast.Attribute):
            chain: list[str] = []
            current: ast.AST = node
            while isinstance(current, ast.Attribute):
                chain.append(current.attr)
                current = current.value
            if (
                isinstance(current, ast.Name)
                and current.id in (self.self_name, self.cls.node.name)
                and chain[-1] in self.cls.attr_aliases
            ):
                return ".".join([self.cls.attr_aliases[chain[-1]], *reversed(chain[:-1])])
        return found


def _nn_kind(qual: str, call: ast.Call, ctx: _Ctx) -> str | None:
    last = qual.rsplit(".", 1)[1]
    if last in ("Parameter", "Buffer"):
        return "tensor"
    if last in _NN_CONTAINERS:
        for inner in ast.walk(call):
            if inner is not call and isinstance(inner, ast.Call):
                inner_qual = ctx.qual(inner.func) or ""
                inner_last = inner_qual.rsplit(".", 1)[-1]
                if (
                    inner_qual.startswith("torch.nn.")
                    and inner_last[:1].isupper()
                    and inner_last not in _NN_NOT_COMPUTE
                    and inner_last not in _NN_CONTAINERS
                ):
                    return "torch-module-list"
        return "local-module-list"
    if last in _NN_NOT_COMPUTE:
        return None
    return "torch-module"


def _call_kind(node: ast.Call, ctx: _Ctx) -> str | None:
    module = ctx.module
    if isinstance(node.func, ast.Name) and node.func.id in module.reference_names:
        return "reference"  # the problem's Model, imported under any name
    qual = ctx.qual(node.func)
    if qual:
        if qual in _EXTENSION_BUILDERS:
            return "ext"
        if qual in _CONTAINER_FACTORIES:
            return "list" if qual == "builtins.list" else "container"
        if qual in (
            "builtins.sorted",
            "builtins.range",
            "builtins.tuple",
            "builtins.enumerate",
            "builtins.zip",
            "builtins.map",
        ):
            return "list"
        if qual in ("builtins.len", "builtins.int", "builtins.float", "builtins.bool", "math.prod"):
            return "number"
        if qual == "itertools.count":
            return "counter"
        if qual in _SIDE_STREAM_CALLS:
            return "stream"
        last = qual.rsplit(".", 1)[-1]
        if qual.startswith("torch.nn.") and last[:1].isupper():
            return _nn_kind(qual, node, ctx)
        if qual.startswith(
            (
                "torch.cuda.",
                "torch.utils.",
                "torch.backends.",
                "torch.version",
                "torch.autograd.",
                "torch.library.",
                "torch.jit.",
            )
        ):
            return None
        if qual.startswith("torch."):
            if last in (
                "numel",
                "is_tensor",
                "is_floating_point",
                "is_complex",
                "get_default_dtype",
                "Size",
                "device",
                "dtype",
                "finfo",
                "iinfo",
                "result_type",
                "promote_types",
                "can_cast",
                "broadcast_shapes",
                "no_grad",
                "inference_mode",
                "enable_grad",
                "get_num_threads",
                "typename",
                "Generator",
            ):
                return None
            return "tensor"
        return None
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
    module = ctx.module
    if isinstance(node, ast.Name):
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
    if isinstance(node, ast.Attribute):
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
    ordered = sorted(info.methods.values(), key=lambda fn: fn.name != "__init__")
    for method in ordered:
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
    return info


# ---------------------------------------------------------------------------------------------
# forward: torch-fallback, silent-fallback, result-cache, phase-detect
# ---------------------------------------------------------------------------------------------


def _torch_verdict(qual: str, policy: Mapping[str, Any]) -> str | None:
    """How a call of ``qual`` counts inside forward: glue, compute, nn-module, custom-op, phase, skip."""
    if not qual.startswith("torch.") and qual != "torch":
        return None
    if (
        qual in _TORCH_COMPILERS
        or qual in _SIDE_STREAM_CALLS
        or qual in _GLOBAL_STATE_CALLS
        or qual in _PRECISION_CALLS
        or qual == "torch.set_float32_matmul_precision"
    ):
        return "skip"
    if qual in _PHASE_CALLS:
        return "phase"
    parts = qual.split(".")
    if parts[1] == "ops" and len(parts) > 2:
        return (
            "compute"
            if parts[2] in ("aten", "prims", "quantized", "_quantized", "mkldnn", "_c10d_functional", "c10d_functional")
            else "custom-op"
        )
    for prefix in policy["glue_torch_namespaces"]:
        if qual == prefix or qual.startswith(prefix + "."):
            return "glue"
    if qual.startswith(_TORCH_COMPUTE_PREFIXES):
        return "compute"
    if len(parts) == 2:
        return "glue" if parts[1] in policy["glue_torch_functions"] else "compute"
    if parts[1] == "Tensor" and len(parts) == 3:
        if parts[2] in policy["glue_tensor_methods"]:
            return "glue"
        return "compute" if parts[2] in COMPUTE_TENSOR_METHODS else "glue"
    if parts[1] == "nn" and parts[-1][:1].isupper():
        return "glue" if parts[-1] in _NN_NOT_COMPUTE else "nn-module"
    if parts[1] in (
        "backends",
        "autograd",
        "version",
        "testing",
        "_C",
        "overrides",
        "types",
        "storage",
        "serialization",
        "hub",
        "profiler",
        "jit",
        "random",
    ):
        return "glue"
    return "compute"


def _label(node: ast.AST, qual: str | None) -> str:
    written = ast.unparse(node)
    if qual and qual != written and not qual.startswith("builtins."):
        return f"{written} ({qual})"
    return written


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
    _collect_strings(module)
    return module
