"""Run precisions (docs/spec.md section 4). `fp32`, `fp16` and `bf16` cast every floating-point
tensor, parameter and buffer of another floating dtype to float32, float16 or bfloat16 (for a
problem written in float32, every KernelBench problem, `fp32` changes nothing); `native` casts
nothing and keeps the problem's own dtypes (fp8, bf16, fp16, integer-packed weights). Integer and
complex tensors are never cast. float64 is the precision of the error profile's reference twin
(roles/reference_store.py), float32 where an operator of the problem has no float64 kernel.

fp8 (`torch.float8_e4m3fn`, `torch.float8_e5m2`, torch 2.1 on) has few kernels of its own: a cast
from it goes through float32 (every fp8 value is exact there), and `comparable` widens it before
any arithmetic on it (the comparison, the tolerance audit)."""

from typing import Any, Iterable, Optional

import torch

from ..protocol.channel import ProtocolError

PRECISIONS = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16, "native": None}
FLOAT64 = torch.float64
FLOAT32 = torch.float32
#: The fp8 dtypes of the installed torch (none before torch 2.1).
FP8_DTYPES = tuple(getattr(torch, name) for name in ("float8_e4m3fn", "float8_e5m2") if hasattr(torch, name))


def run_dtype(precision: str) -> Optional[torch.dtype]:
    """The dtype floating tensors are cast to, or None when they keep their own (`native`)."""
    if precision not in PRECISIONS:
        raise ProtocolError(f"expected `precision` to be one of {', '.join(PRECISIONS)}, got {precision!r}")
    return PRECISIONS[precision]


def dtype_name(dtype: torch.dtype) -> str:
    """`torch.bfloat16` -> `bfloat16`."""
    return str(dtype).replace("torch.", "")


def is_fp8(dtype: torch.dtype) -> bool:
    return dtype in FP8_DTYPES


def cast_tensor(tensor: torch.Tensor, dtype: Optional[torch.dtype]) -> torch.Tensor:
    """A floating tensor in `dtype` (itself when it is already, or when `dtype` is None); fp8 goes
    through float32 both ways. Other tensors are returned as they are."""
    if dtype is None or not tensor.is_floating_point() or tensor.dtype == dtype:
        return tensor
    if is_fp8(tensor.dtype) and dtype != FLOAT32:
        tensor = tensor.to(FLOAT32)
    if is_fp8(dtype) and tensor.dtype not in (FLOAT32, dtype):
        tensor = tensor.to(FLOAT32)
    return tensor.to(dtype)


def comparable(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor as arithmetic can read it: fp8 widened to float32 (exactly), anything else as is."""
    return tensor.to(FLOAT32) if is_fp8(tensor.dtype) else tensor


def narrow_floats(values: Iterable[Any]) -> bool:
    """Whether any of `values` (tensors, lists and tuples of them, other values) holds a
    floating-point tensor of fewer than 32 bits (fp16, bf16, fp8)."""
    for value in values:
        if isinstance(value, (list, tuple)):
            if narrow_floats(value):
                return True
        elif isinstance(value, torch.Tensor) and value.is_floating_point() and value.element_size() < 4:
            return True
    return False


def cast_value(value: Any, device: torch.device, dtype: Optional[torch.dtype]) -> Any:
    """A copy of `value` on `device`: floating tensors cast to `dtype` (when given), other tensors
    only moved; lists and tuples cast element by element; anything else returned as is."""
    if isinstance(value, torch.Tensor):
        if dtype is None or not value.is_floating_point() or value.dtype == dtype:
            return value.to(device=device, copy=True)
        if is_fp8(value.dtype) or is_fp8(dtype):
            return cast_tensor(value.to(device=device), dtype)
        return value.to(device=device, dtype=dtype, copy=True)
    if isinstance(value, (list, tuple)):
        cast = [cast_value(item, device, dtype) for item in value]
        return cast if isinstance(value, list) else tuple(cast)
    return value


def cast_module(model: torch.nn.Module, dtype: Optional[torch.dtype]) -> torch.nn.Module:
    """Casts the model's floating parameters and buffers of another dtype to `dtype` in place (as
    `Module.to(dtype)` does, through the same `_apply`, but leaving complex ones alone and taking
    fp8 through float32); nothing when `dtype` is None."""
    if dtype is None:
        return model
    tensors = list(model.parameters()) + list(model.buffers())
    if all(not tensor.is_floating_point() or tensor.dtype == dtype for tensor in tensors):
        return model
    return model._apply(lambda tensor: cast_tensor(tensor, dtype))


def cast_model(model: torch.nn.Module, device: torch.device, dtype: Optional[torch.dtype]) -> torch.nn.Module:
    """Moves the model to `device` and casts its floating parameters and buffers to `dtype`."""
    return cast_module(model.to(device), dtype)
