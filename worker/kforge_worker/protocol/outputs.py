"""Output structures as leaves plus a skeleton, and their files.

`flatten` turns a model's output (a tensor, tuples/lists/dicts of them, nested, with non-tensor
leaves such as int, float or None) into a `FlatOutput`: a skeleton string where `T` stands for a
tensor leaf and `L` for any other leaf (`(T, [T, L])`), the leaves in order (tensors detached and
copied to the CPU, or with `keep_device` detached and left where they are: the reference role keeps
its outputs on the GPU, where a GPU-sized problem's float64 comparisons are fast and the host's
memory is not spent), and one info dict per leaf (`type`, and for tensors `device`).

A flattened output travels to the judge as a header and raw bytes (output_wire.py, handover.py);
no pickle is involved.
"""

from dataclasses import dataclass
from typing import Any, List

import torch

MAX_DEPTH = 32
MAX_LEAVES = 4096
MAX_REPR_CHARS = 200
SIMPLE_TYPES = (bool, int, str, type(None))


class OutputStructureError(Exception):
    """An output too deep or too wide to describe (a cycle, a huge container)."""


@dataclass
class FlatOutput:
    skeleton: str
    leaves: List[Any]
    leaf_info: List[dict]


def _leaf_info(value: Any) -> dict:
    if isinstance(value, torch.Tensor):
        plain = type(value) in (torch.Tensor, torch.nn.Parameter)
        return {"type": "tensor" if plain else "tensor-subclass:" + type(value).__name__, "device": value.device.type}
    if isinstance(value, SIMPLE_TYPES) or type(value) is float:
        return {"type": type(value).__name__}
    return {"type": "object:" + type(value).__name__}


def _plain_copy(tensor: torch.Tensor, keep_device: bool, copy: bool) -> torch.Tensor:
    plain = tensor.detach()
    if type(plain) is not torch.Tensor:
        plain = plain.as_subclass(torch.Tensor)
    if keep_device:
        return plain.clone(memory_format=torch.contiguous_format) if copy else plain.contiguous()
    if plain.device.type != "cpu":
        return plain.to("cpu").contiguous()
    return plain.clone(memory_format=torch.contiguous_format)


def _leaf_value(value: Any, keep_device: bool, copy: bool) -> Any:
    if isinstance(value, torch.Tensor):
        return _plain_copy(value, keep_device, copy)
    if isinstance(value, SIMPLE_TYPES) or type(value) is float:
        return value
    text = repr(value)
    return text[:MAX_REPR_CHARS]


def _walk(node: Any, depth: int, leaves: List[Any], infos: List[dict], keep_device: bool, copy: bool) -> str:
    """The skeleton of `node`; its leaves and their infos are appended to `leaves` and `infos`."""
    if depth > MAX_DEPTH:
        raise OutputStructureError(f"the output is nested deeper than {MAX_DEPTH} levels")
    if isinstance(node, (tuple, list)) and not isinstance(node, torch.Tensor):
        parts = [_walk(item, depth + 1, leaves, infos, keep_device, copy) for item in node]
        if isinstance(node, list):
            return "[" + ", ".join(parts) + "]"
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if isinstance(node, dict):
        parts = [
            f"{str(key)!r}: {_walk(item, depth + 1, leaves, infos, keep_device, copy)}" for key, item in node.items()
        ]
        return "{" + ", ".join(parts) + "}"
    if len(leaves) >= MAX_LEAVES:
        raise OutputStructureError(f"the output has more than {MAX_LEAVES} leaves")
    infos.append(_leaf_info(node))
    leaves.append(_leaf_value(node, keep_device, copy))
    return "T" if isinstance(node, torch.Tensor) else "L"


def flatten(value: Any, keep_device: bool = False, copy: bool = False) -> FlatOutput:
    """Flattens an output structure; raises OutputStructureError past MAX_DEPTH or MAX_LEAVES.
    Tensor leaves are CPU copies, or with `keep_device` stay on their device: contiguous views
    there, or with `copy` too, copies on the device (the candidate's outputs, which its code must
    not reach once the call has returned, without a host round trip at GPU size).

    The walk is a module function, not a closure: a recursive closure is a reference cycle (the
    function and its own cell) that held the leaves list, so every flattened output (gigabytes at
    KernelBench's sizes) stayed alive until Python's cyclic collector happened to run."""
    leaves: List[Any] = []
    infos: List[dict] = []
    skeleton = _walk(value, 0, leaves, infos, keep_device, copy)
    return FlatOutput(skeleton=skeleton, leaves=leaves, leaf_info=infos)


def leaf_name(index: int, count: int) -> str:
    """How a message names leaf `index` of an output of `count` leaves."""
    return "the output" if count == 1 else f"output leaf {index}"


def describe_leaf(leaf: Any, info: dict) -> str:
    if isinstance(leaf, torch.Tensor):
        dtype = str(leaf.dtype).replace("torch.", "")
        return f"{info['type']} {dtype} {tuple(leaf.shape)}"
    return info["type"]


def describe(flat: FlatOutput) -> str:
    """A short description, e.g. `[tensor float32 (16, 1024)]` or `[(tensor float32 (4,), int)]`."""
    described = iter([describe_leaf(leaf, info) for leaf, info in zip(flat.leaves, flat.leaf_info)])
    out, quote, escaped = [], None, False
    for char in flat.skeleton:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
            out.append(char)
        elif char in "'\"":
            quote = char
            out.append(char)
        else:
            out.append(next(described) if char in "TL" else char)
    return "[" + "".join(out) + "]"
