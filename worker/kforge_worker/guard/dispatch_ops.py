"""Which ATen operators a candidate's forward may dispatch: glue or compute, derived from the policy.

The static guard allows a list of torch functions and tensor methods in forward (policy.py:
`glue_torch_functions`, `glue_tensor_methods`). Each of those names is glue as the ATen operator of
its own name and as the operators :data:`GLUE_ATEN` lists for it, which is what the call reaches
the dispatcher as (`x.reshape(-1)` is `aten::view`, `aten::_reshape_alias` or `aten::clone` +
`aten::_unsafe_view`; `x.contiguous()` is nothing or `aten::clone`; `torch.tensor([...])` is
`aten::lift_fresh`), so that the run-time trace (dispatch_trace.py) and the static allow-list agree
(a policy that adds `cat` to `glue_torch_functions` makes `aten::cat` glue). :data:`IMPLEMENTATION_GLUE`
adds, under every policy, what allowed code dispatches without naming it: the views and copies
behind indexing and casts, and the allocation and copy glue the native static check allows in
C++ (`torch::empty_like`, `.contiguous()`, `.copy_()`).

An operator is named `namespace::name` with its overload after a dot (`aten::add.Tensor`,
`aten::mm`). Operators of PyTorch's own namespaces (:data:`PYTORCH_NAMESPACES`) that are not glue
are compute; an operator of another namespace is the candidate's own (a custom operator it
registered through `TORCH_LIBRARY` or `torch.library`): `own`.
"""

from typing import Any, Dict, FrozenSet, Iterable, Mapping, Tuple

GLUE = "glue"
COMPUTE = "compute"
OWN = "own"

#: Namespaces whose operators are PyTorch's (or a PyTorch library's) compute, not the candidate's.
PYTORCH_NAMESPACES = frozenset({"aten", "prims", "quantized", "_quantized", "mkldnn", "torchvision", "torchaudio"})

_RESHAPE = ("view", "_reshape_alias", "_unsafe_view", "clone")
_CAST = ("_to_copy",)
_FRESH = ("lift_fresh", "lift_fresh_copy", "lift", "_to_copy")
_INDEX_READ = ("select", "slice", "unsqueeze", "alias", "index", "view", "expand", "lift_fresh")
_INDEX_WRITE = _INDEX_READ + ("copy_", "fill_", "index_put_", "_index_put_impl_", "masked_fill_")

#: ATen operators (base names, in namespace `aten`) each glue name of a policy dispatches.
GLUE_ATEN: Dict[str, Tuple[str, ...]] = {
    # torch.N(...) allocation
    "empty": ("empty",),
    "empty_like": ("empty_like", "empty", "empty_strided"),
    "empty_strided": ("empty_strided",),
    "zeros": ("zeros", "zero_", "empty"),
    "zeros_like": ("zeros_like", "zero_", "empty_like"),
    "ones": ("ones", "fill_", "empty"),
    "ones_like": ("ones_like", "fill_", "empty_like"),
    "full": ("full", "fill_", "empty"),
    "full_like": ("full_like", "fill_", "empty_like"),
    "arange": ("arange",),
    "tensor": _FRESH,
    "as_tensor": _FRESH + ("alias", "detach"),
    "from_numpy": ("detach", "lift_fresh"),
    "frombuffer": ("lift_fresh",),
    # views and layout (torch.N and tensor methods)
    "reshape": _RESHAPE,
    "reshape_as": _RESHAPE,
    "flatten": _RESHAPE,
    "unflatten": _RESHAPE,
    "view": ("view", "_unsafe_view"),
    "view_as": ("view", "_unsafe_view"),
    "permute": ("permute",),
    "transpose": ("transpose", "transpose_"),
    "t": ("t", "t_", "transpose"),
    "squeeze": ("squeeze", "squeeze_"),
    "unsqueeze": ("unsqueeze", "unsqueeze_"),
    "narrow": ("narrow", "slice"),
    "chunk": ("chunk", "split", "slice"),
    "split": ("split", "split_with_sizes", "slice"),
    "tensor_split": ("tensor_split", "slice"),
    "unbind": ("unbind", "select"),
    "select": ("select",),
    "movedim": ("movedim", "permute"),
    "swapaxes": ("swapaxes", "transpose"),
    "as_strided": ("as_strided", "as_strided_"),
    "broadcast_to": ("broadcast_to", "expand"),
    "expand": ("expand",),
    "expand_as": ("expand",),
    "view_as_real": ("view_as_real",),
    "view_as_complex": ("view_as_complex",),
    "contiguous": ("contiguous", "clone"),
    # copies and casts
    "to": ("_to_copy", "to", "copy_", "empty_strided"),
    "cuda": _CAST,
    "cpu": _CAST,
    "float": _CAST,
    "double": _CAST,
    "half": _CAST,
    "bfloat16": _CAST,
    "int": _CAST,
    "long": _CAST,
    "short": _CAST,
    "bool": _CAST,
    "byte": _CAST,
    "char": _CAST,
    "type_as": _CAST,
    "clone": ("clone",),
    "detach": ("detach",),
    "detach_": ("detach_",),
    "copy_": ("copy_", "_copy_from", "_copy_from_and_resize"),
    "zero_": ("zero_",),
    "fill_": ("fill_",),
    "new_empty": ("new_empty", "empty"),
    "new_zeros": ("new_zeros", "zeros", "zero_"),
    "new_ones": ("new_ones", "ones", "fill_"),
    "new_full": ("new_full", "full", "fill_"),
    "new_tensor": _FRESH,
    "new_empty_strided": ("new_empty_strided", "empty_strided"),
    "pin_memory": ("pin_memory", "_pin_memory"),
    "record_stream": ("record_stream",),
    # reading values and indexing
    "item": ("_local_scalar_dense",),
    "tolist": ("_local_scalar_dense",),
    "numpy": ("detach",),
    "__getitem__": _INDEX_READ,
    "__setitem__": _INDEX_WRITE,
    # queries (they rarely reach the dispatcher)
    "size": ("size", "sym_size"),
    "stride": ("stride", "sym_stride"),
    "numel": ("numel", "sym_numel"),
    "storage_offset": ("storage_offset", "sym_storage_offset"),
    "is_contiguous": ("is_contiguous",),
    "is_pinned": ("is_pinned",),
    "is_floating_point": ("is_floating_point",),
    "is_complex": ("is_complex",),
    "result_type": ("result_type",),
    "can_cast": ("can_cast",),
    "promote_types": ("promote_types",),
}

#: Operators allowed code dispatches without naming them, under every policy: views, copies and
#: value reads behind indexing, casts and `int(t)`; the allocation and copy glue of C++ sources
#: (native.py's `_CPP_GLUE`: `torch::empty*`, `zeros*`, `ones*`, `full*`, `arange`, plus
#: `.contiguous()`, `.copy_()`, `.to()`); resizing of `out=` results; size queries.
IMPLEMENTATION_GLUE = frozenset(
    {
        "alias",
        "detach",
        "detach_",
        "lift",
        "lift_fresh",
        "lift_fresh_copy",
        "view",
        "_unsafe_view",
        "_reshape_alias",
        "_local_scalar_dense",
        "_to_copy",
        "clone",
        "copy_",
        "_copy_from",
        "_copy_from_and_resize",
        "resize_",
        "resize_as_",
        "set_",
        "empty",
        "empty_like",
        "empty_strided",
        "zeros",
        "zeros_like",
        "ones",
        "ones_like",
        "full",
        "full_like",
        "arange",
        "scalar_tensor",
        "size",
        "stride",
        "sym_size",
        "sym_stride",
        "sym_numel",
        "sym_storage_offset",
        "is_same_size",
        "is_pinned",
        "_has_compatible_shallow_copy_type",
        "record_stream",
    }
)


def operator_name(func: Any) -> str:
    """`namespace::name` plus `.overload` unless it is the default one (`aten::add.Tensor`)."""
    schema = getattr(func, "_schema", None)
    if schema is not None:
        name, overload = str(schema.name), str(getattr(schema, "overload_name", "") or "")
        return f"{name}.{overload}" if overload and overload != "default" else name
    text = str(func)  # "aten.add.Tensor"
    parts = text.split(".")
    if len(parts) >= 2:
        base = f"{parts[0]}::{parts[1]}"
        return base if len(parts) == 2 or parts[2] == "default" else f"{base}.{parts[2]}"
    return text


def split_name(name: str) -> Tuple[str, str]:
    """(namespace, base name without overload) of `aten::add.Tensor`: ('aten', 'add')."""
    namespace, _, rest = name.partition("::")
    if not rest:
        return "", namespace.split(".")[0]
    return namespace, rest.split(".")[0]


def glue_operators(policy: Mapping[str, Any]) -> FrozenSet[str]:
    """Base names of the `aten` operators the policy's glue names dispatch, plus IMPLEMENTATION_GLUE."""
    names = set(IMPLEMENTATION_GLUE)
    allowed: Iterable[str] = list(policy.get("glue_torch_functions", [])) + list(policy.get("glue_tensor_methods", []))
    for name in allowed:
        names.add(name)
        names.update(GLUE_ATEN.get(name, ()))
    return frozenset(names)


def classify(name: str, glue: FrozenSet[str]) -> str:
    """GLUE, COMPUTE or OWN for an operator name such as `aten::mm` or `aten::add.Tensor`."""
    namespace, base = split_name(name)
    if namespace not in PYTORCH_NAMESPACES:
        return OWN
    if namespace == "aten" and base in glue:
        return GLUE
    return COMPUTE
