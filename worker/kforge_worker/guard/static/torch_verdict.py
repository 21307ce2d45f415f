"""How a call of torch counts inside forward (glue, compute, a torch.nn module, a custom op, a phase
check), under a policy's lists, and how a call is named in a finding."""

from __future__ import annotations

import ast
from typing import Any, Mapping

from .compute_names import (
    COMPUTE_TENSOR_METHODS,
    _NN_NOT_COMPUTE,
    _PHASE_CALLS,
    _TORCH_COMPILERS,
    _TORCH_COMPUTE_PREFIXES,
)
from .names import _GLOBAL_STATE_CALLS, _PRECISION_CALLS
from .sandbox_names import _SIDE_STREAM_CALLS


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
