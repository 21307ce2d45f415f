"""Roofline bound of a reference run (docs/hacks.md #16, docs/spec.md section 7: share of speed-of-light).

``bytes moved`` counts each input, parameter and buffer read once and each output written once,
from tensor sizes (``numel * element_size``): the least traffic any implementation needs, with a
cold cache. ``FLOPs`` come from ``torch.utils.flop_counter.FlopCounterMode`` where it exists
(PyTorch >= 2.1); otherwise from a small estimate that counts only matrix products and
convolutions seen through ``torch.overrides.TorchFunctionMode`` (elementwise work counts zero, so
the estimate errs low and the bound stays a lower bound).

    lower_bound_ms = 1e3 * max(bytes / bandwidth_bytes_per_s, flops / peak_flops_per_s)
    share_of_speed_of_light = lower_bound_ms / measured_ms        (1.0 = at the roofline)

A measured time below the bound is physically impossible for the reference's work: the result is
cached, deferred, mis-timed, or the problem reads inputs it does not need (flag the problem).
Bandwidth is the device's measured copy bandwidth and the peak is that of the unit the run's
precision uses; both are the caller's to supply.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import torch

from ..tolerance.degenerate import tensor_leaves


def tensor_bytes(value: Any) -> int:
    """Bytes held by the tensors of a nested value (``numel * element_size`` each)."""
    return sum(leaf.numel() * leaf.element_size() for leaf in tensor_leaves(value))


def count_bytes(inputs: Any, outputs: Any, model: torch.nn.Module | None = None) -> int:
    """Inputs (and the model's parameters and buffers) read once, plus outputs written once."""
    state = 0
    if model is not None:
        state = sum(t.numel() * t.element_size() for t in list(model.parameters()) + list(model.buffers()))
    return tensor_bytes(inputs) + state + tensor_bytes(outputs)


def _flop_counter_class() -> type | None:
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        return None
    return FlopCounterMode


def _matmul_flops(args: Sequence[Any], output: Any) -> int:
    tensors = [arg for arg in args if isinstance(arg, torch.Tensor)]
    if len(tensors) < 2 or not isinstance(output, torch.Tensor):
        return 0
    left = tensors[-2]
    inner = left.shape[-1] if left.dim() >= 1 else 1
    return 2 * max(output.numel(), 1) * inner


def _estimate(name: str, args: Sequence[Any], kwargs: dict[str, Any], output: Any) -> int:
    if name in ("matmul", "mm", "bmm", "__matmul__", "__rmatmul__", "dot", "mv", "inner", "vdot"):
        return _matmul_flops(args, output)
    if name in ("addmm", "baddbmm", "addbmm", "addmv"):
        return _matmul_flops(args[1:], output) + (output.numel() if isinstance(output, torch.Tensor) else 0)
    if name == "linear" and len(args) >= 2 and isinstance(output, torch.Tensor):
        return 2 * output.numel() * args[1].shape[-1]
    if (
        name.startswith(("conv1d", "conv2d", "conv3d", "conv_transpose"))
        and len(args) >= 2
        and isinstance(output, torch.Tensor)
    ):
        weight = args[1]
        per_output = weight[0].numel()
        if name.startswith("conv_transpose"):
            return 2 * args[0].numel() * per_output
        return 2 * output.numel() * per_output
    return 0


def _estimating_mode() -> tuple[Any, Callable[[], int]] | None:
    try:
        from torch.overrides import TorchFunctionMode
    except ImportError:
        return None
    total = [0]

    class _Counter(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            output = func(*args, **kwargs)
            total[0] += _estimate(getattr(func, "__name__", ""), args, kwargs, output)
            return output

    return _Counter(), lambda: total[0]


def run_and_count_flops(model: Callable[..., Any], inputs: Sequence[Any]) -> tuple[Any, int, str]:
    """Run ``model(*inputs)`` once under no_grad; return ``(outputs, flops, method)``.

    ``method`` is ``"flop_counter"`` (PyTorch's counter), ``"estimate"`` (matrix products and
    convolutions only) or ``"none"`` (no counting available: flops is 0).
    """
    counter_class = _flop_counter_class()
    counter = None
    if counter_class is not None:
        try:
            counter = counter_class(display=False)
        except TypeError:  # an early FlopCounterMode with another signature: estimate instead
            counter = None
    with torch.no_grad():
        if counter is not None:
            with counter:
                outputs = model(*inputs)
            return outputs, int(counter.get_total_flops()), "flop_counter"
        estimating = _estimating_mode()
        if estimating is not None:
            mode, total = estimating
            with mode:
                outputs = model(*inputs)
            return outputs, int(total()), "estimate"
        return model(*inputs), 0, "none"


def measure_reference(model: torch.nn.Module, inputs: Sequence[Any]) -> dict[str, Any]:
    """Bytes and FLOPs of one reference run: ``{bytes_moved, input_bytes, state_bytes,
    output_bytes, flops, flop_method}`` (bytes in bytes, flops as a count)."""
    outputs, flops, method = run_and_count_flops(model, inputs)
    state = count_bytes((), (), model)
    input_bytes, output_bytes = tensor_bytes(list(inputs)), tensor_bytes(outputs)
    return {
        "bytes_moved": input_bytes + state + output_bytes,
        "input_bytes": input_bytes,
        "state_bytes": state,
        "output_bytes": output_bytes,
        "flops": flops,
        "flop_method": method,
    }


def lower_bound_ms(
    bytes_moved: float, flops: float, bandwidth_bytes_per_s: float, peak_flops_per_s: float | None
) -> float:
    """The roofline bound in milliseconds: the slower of moving the bytes and doing the FLOPs.

    ``peak_flops_per_s`` may be ``None`` only when ``flops`` is 0 (a purely memory-bound bound).
    """
    if bytes_moved < 0 or flops < 0:
        raise ValueError(f"expected non-negative bytes and flops, got {bytes_moved} and {flops}")
    if not bandwidth_bytes_per_s or bandwidth_bytes_per_s <= 0:
        raise ValueError(f"expected `bandwidth_bytes_per_s` to be positive, got {bandwidth_bytes_per_s}")
    memory_s = bytes_moved / bandwidth_bytes_per_s
    if flops == 0:
        return memory_s * 1e3
    if not peak_flops_per_s or peak_flops_per_s <= 0:
        raise ValueError(f"expected `peak_flops_per_s` to be positive when flops > 0, got {peak_flops_per_s}")
    return max(memory_s, flops / peak_flops_per_s) * 1e3


def share_of_speed_of_light(measured_ms: float, bound_ms: float) -> float:
    """``bound_ms / measured_ms``: 1.0 at the roofline, above 1.0 faster than physically possible."""
    if not measured_ms or measured_ms <= 0 or math.isnan(measured_ms):
        raise ValueError(f"expected `measured_ms` to be positive, got {measured_ms}")
    if bound_ms < 0:
        raise ValueError(f"expected `bound_ms` to be non-negative, got {bound_ms}")
    return bound_ms / measured_ms


def floored_ms(measured_ms: float, bound_ms: float) -> float:
    """A time floored at the bound, for geometric means that one near-zero time must not collapse."""
    return max(measured_ms, bound_ms)
