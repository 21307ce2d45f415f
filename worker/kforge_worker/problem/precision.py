"""Run precisions: `fp32` runs as given; `fp16`/`bf16` cast floating-point tensors, parameters and
buffers; integer tensors are left alone. float64 is the precision of the error-profile reference."""

from typing import Any, Optional

import torch

from ..protocol.channel import ProtocolError

PRECISIONS = {"fp32": None, "fp16": torch.float16, "bf16": torch.bfloat16}
FLOAT64 = torch.float64


def run_dtype(precision: str) -> Optional[torch.dtype]:
    """The dtype floating tensors are cast to, or None when they run as given (fp32)."""
    if precision not in PRECISIONS:
        raise ProtocolError(f"expected `precision` to be one of {', '.join(PRECISIONS)}, got {precision!r}")
    return PRECISIONS[precision]


def cast_value(value: Any, device: torch.device, dtype: Optional[torch.dtype]) -> Any:
    """A copy of `value` on `device`: floating tensors cast to `dtype` (when given), other tensors
    only moved; lists and tuples cast element by element; anything else returned as is."""
    if isinstance(value, torch.Tensor):
        if dtype is not None and value.is_floating_point():
            return value.to(device=device, dtype=dtype, copy=True)
        return value.to(device=device, copy=True)
    if isinstance(value, (list, tuple)):
        cast = [cast_value(item, device, dtype) for item in value]
        return cast if isinstance(value, list) else tuple(cast)
    return value


def cast_model(model: torch.nn.Module, device: torch.device, dtype: Optional[torch.dtype]) -> torch.nn.Module:
    """Moves the model to `device` and casts its floating parameters and buffers to `dtype`."""
    model = model.to(device)
    if dtype is not None:
        model = model.to(dtype)
    return model
