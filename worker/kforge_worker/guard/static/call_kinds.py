"""The kind of a call of an imported name (`torch.zeros(...)` is a tensor, `nn.Linear(...)` a
torch.nn module, `dict()` a container), for type inference (inference.py)."""

from __future__ import annotations

import ast

from .compute_names import _EXTENSION_BUILDERS, _NN_CONTAINERS, _NN_NOT_COMPUTE
from .context import _Ctx
from .names import _CONTAINER_FACTORIES
from .sandbox_names import _SIDE_STREAM_CALLS

#: torch namespaces whose calls return nothing the guard tracks (streams, utilities, switches).
_UNTRACKED_TORCH_PREFIXES = (
    "torch.cuda.",
    "torch.utils.",
    "torch.backends.",
    "torch.version",
    "torch.autograd.",
    "torch.library.",
    "torch.jit.",
)
#: torch functions that return no tensor: queries, dtypes and devices, grad-mode contexts.
_TORCH_QUERIES = (
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
)


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


def _qualified_call_kind(qual: str, node: ast.Call, ctx: _Ctx) -> str | None:
    """The kind of a call of ``qual``, a name the module imported (``None``: not one the guard tracks)."""
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
    if qual.startswith(_UNTRACKED_TORCH_PREFIXES):
        return None
    if qual.startswith("torch."):
        if last in _TORCH_QUERIES:
            return None
        return "tensor"
    return None
