"""Shapes, dtypes and bytes of a call's arguments or outputs, for a dry run's size report."""

from typing import Any, List

import torch


def describe_tensors(values: Any) -> List[dict]:
    """One entry per tensor in `values` (a tensor, or a list/tuple/dict holding them, in order):
    `{"shape": [...], "dtype": "float32", "bytes": n}`; other values are skipped."""
    found: List[dict] = []

    def visit(value: Any) -> None:
        if isinstance(value, torch.Tensor):
            found.append(
                {
                    "shape": list(value.shape),
                    "dtype": str(value.dtype).replace("torch.", ""),
                    "bytes": value.numel() * value.element_size(),
                }
            )
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(item)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)

    visit(values)
    return found
