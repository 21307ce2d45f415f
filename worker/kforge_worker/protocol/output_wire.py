"""How a candidate's output travels to the judge: its header, and its bytes on the hand-over pipe.

The header is JSON inside the `handover` message: the output's skeleton and leaf descriptions
(outputs.py) and one entry per leaf, `{"tensor": {"dtype", "shape", "nbytes"}}` or `{"value": v}`
(Python floats as `float.hex()` strings, so NaN and ±Inf survive). The bytes, when they travel by
pipe, are each tensor leaf's raw bytes in leaf order and nothing else: the judge reads exactly the
sizes it computed itself from a header it has checked against the reference's own output
(handover_receive.py), so no size, offset or path the candidate chose is ever followed.

On cuda the bytes move through pinned host buffers of STAGING_BYTES: device -> pinned -> pipe on
the candidate's side, pipe -> pinned -> device on the judge's. No pickle is involved anywhere.
"""

import os
import select
from typing import Any, Dict, List

import torch

from .outputs import FlatOutput

STAGING_BYTES = 16 * 1024 * 1024
#: The pipe's buffer asked for (`F_SETPIPE_SZ`); the kernel's `pipe-max-size` may give less.
PIPE_BYTES = 1024 * 1024
F_SETPIPE_SZ = 1031
DTYPES: Dict[str, torch.dtype] = {
    str(dtype).replace("torch.", ""): dtype
    for dtype in (
        torch.float64,
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.complex64,
        torch.complex128,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bool,
    )
    # fp8 (torch 2.1 on; `--precision native`): one byte a value, read and written as bytes like the rest.
    + tuple(getattr(torch, name) for name in ("float8_e4m3fn", "float8_e5m2") if hasattr(torch, name))
}
_pinned: Dict[str, torch.Tensor] = {}


class OutputWireError(Exception):
    """An output that cannot be described on the wire (a dtype or layout with no entry)."""


class PipeStalled(Exception):
    """The pipe gave no byte for the read's whole patience, or ended inside an output."""


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def tensor_bytes(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor's bytes as a flat uint8 view (the tensor must be contiguous)."""
    flat = tensor.reshape(-1)
    return flat.view(torch.uint8) if flat.dtype != torch.uint8 else flat


def header_of(flat: FlatOutput) -> dict:
    """The header fields of an output whose tensor leaves are contiguous."""
    entries: List[dict] = []
    for leaf in flat.leaves:
        if isinstance(leaf, torch.Tensor):
            name = dtype_name(leaf.dtype)
            if name not in DTYPES:
                raise OutputWireError(f"an output of dtype {name} cannot be handed over")
            if leaf.layout != torch.strided:
                raise OutputWireError(
                    f"an output with layout {leaf.layout} cannot be handed over; return a dense tensor"
                )
            entries.append(
                {"tensor": {"dtype": name, "shape": list(leaf.shape), "nbytes": leaf.numel() * leaf.element_size()}}
            )
        else:
            entries.append({"value": leaf.hex() if type(leaf) is float else leaf})
    return {"skeleton": flat.skeleton, "leaf_info": flat.leaf_info, "leaves": entries}


def pinned_buffer() -> torch.Tensor:
    """The process's pinned host buffer of STAGING_BYTES (made on first use)."""
    if "buffer" not in _pinned:
        _pinned["buffer"] = torch.empty(STAGING_BYTES, dtype=torch.uint8, pin_memory=True)
    return _pinned["buffer"]


def widen_pipe(fd: int) -> None:
    """Asks for a PIPE_BYTES buffer (fewer wake-ups per gigabyte); the default stays where refused."""
    try:
        import fcntl

        fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_BYTES)
    except OSError:
        pass


def _write_all(fd: int, view: memoryview) -> None:
    while view:
        view = view[os.write(fd, view) :]


def write_tensor(fd: int, tensor: torch.Tensor) -> None:
    """Writes a contiguous tensor's bytes to `fd` (from the cpu directly, from cuda through the pinned buffer)."""
    data = tensor_bytes(tensor)
    if data.device.type == "cpu":
        _write_all(fd, memoryview(data.numpy()))
        return
    staging = pinned_buffer()
    for start in range(0, data.numel(), STAGING_BYTES):
        count = min(STAGING_BYTES, data.numel() - start)
        staging[:count].copy_(data[start : start + count])
        _write_all(fd, memoryview(staging[:count].numpy()))


def _read_exact(fd: int, target: memoryview, patience_s: float) -> None:
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    done = 0
    while done < len(target):
        if not poller.poll(int(patience_s * 1000)):
            raise PipeStalled(f"no byte came for {patience_s:g} s after {done} of {len(target)}")
        count = os.readv(fd, [target[done:]])
        if count == 0:
            raise PipeStalled(f"the pipe ended after {done} of {len(target)} bytes")
        done += count


def read_tensor(fd: int, target: torch.Tensor, patience_s: float) -> None:
    """Fills the fresh contiguous tensor `target` with exactly its size in bytes from `fd`."""
    data = tensor_bytes(target)
    if data.device.type == "cpu":
        view = memoryview(data.numpy())
        for start in range(0, data.numel(), STAGING_BYTES):
            _read_exact(fd, view[start : start + STAGING_BYTES], patience_s)
        return
    staging = pinned_buffer()
    view = memoryview(staging.numpy())
    for start in range(0, data.numel(), STAGING_BYTES):
        count = min(STAGING_BYTES, data.numel() - start)
        _read_exact(fd, view[:count], patience_s)
        data[start : start + count].copy_(staging[:count])
    if data.device.type == "cuda":
        torch.cuda.synchronize(data.device)


def pending_bytes(fd: int) -> bool:
    """True when a byte is waiting in the pipe (read without blocking; the byte is consumed)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    for _, events in poller.poll(0):
        if events & select.POLLIN:
            try:
                return bool(os.read(fd, 1))
            except BlockingIOError:
                return False
    return False


def value_leaf(entry: Any, info: dict) -> Any:
    """A non-tensor leaf's value from its header entry (floats back from `float.hex()`)."""
    value = entry.get("value")
    return float.fromhex(value) if info.get("type") == "float" and isinstance(value, str) else value
