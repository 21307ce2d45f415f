"""CUDA IPC for the output hand-over: device memory of the candidate's process copied by the judge.

The candidate's worker copies an output's leaves into one `cudaMalloc` block of its own
(`IpcStaging`, leaves at 256-byte aligned offsets) and exports it with `cudaIpcGetMemHandle`; the
judge (the reference worker, another process that never runs candidate code) opens the handle,
copies each leaf into memory of its own on its own stream, synchronizes and closes the handle
(`copy_from_handle`). The candidate's process never learns where the judge's copy lives, so nothing
it does after the copy can change it. The block is the worker's own `cudaMalloc` rather than a
block of PyTorch's caching allocator, because legacy IPC handles name whole allocations and do not
work on the expandable segments a `PYTORCH_CUDA_ALLOC_CONF` may ask for.

Everything here returns an error text instead of raising where the CUDA runtime refuses (no
libcudart, a handle that cannot be opened across these two processes' namespaces): the hand-over
then falls back to the pipe (handover.py).
"""

import ctypes
from typing import List, Optional, Tuple

import torch

from .cudart import CudaRuntime

IPC_HANDLE_BYTES = 64
ALIGNMENT_BYTES = 256
IPC_LAZY_ENABLE_PEER_ACCESS = 1


class _Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * IPC_HANDLE_BYTES)]


def handle_hex(handle: _Handle) -> str:
    """All 64 bytes of an IPC handle as hex. Reading the `c_char` field instead would stop at its
    first zero byte (handles hold several), and the judge would be given a different handle."""
    return ctypes.string_at(ctypes.addressof(handle), IPC_HANDLE_BYTES).hex()


def _runtime():
    runtime = CudaRuntime.discover()
    if not runtime.available:
        return None, "no libcudart could be loaded"
    return runtime.libraries[0][1], None


def _error(library, code: int, what: str) -> str:
    return f"{what} returned {CudaRuntime.error_name(library, code)}"


def device_bytes(pointer: int, nbytes: int, device: torch.device) -> torch.Tensor:
    """A uint8 tensor over `nbytes` of device memory at `pointer` (no copy, no ownership)."""

    class Region:
        __cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (pointer, False), "version": 3}

    with torch.cuda.device(device):
        return torch.as_tensor(Region(), device=device)


def layout(sizes: List[int]) -> Tuple[List[int], int]:
    """(offset of each leaf, total bytes) with every leaf at an ALIGNMENT_BYTES boundary."""
    offsets, total = [], 0
    for size in sizes:
        offsets.append(total)
        total += -(-size // ALIGNMENT_BYTES) * ALIGNMENT_BYTES
    return offsets, max(total, ALIGNMENT_BYTES)


class IpcStaging:
    """One `cudaMalloc` block holding an output's tensor leaves, exported for the judge."""

    def __init__(self, library, pointer: int, device: torch.device):
        self.library, self.pointer, self.device = library, pointer, device

    @classmethod
    def of(cls, leaves: List[torch.Tensor], device: torch.device) -> Tuple[Optional["IpcStaging"], Optional[str]]:
        """The leaves (each a flat uint8 view of a contiguous tensor: output_wire.tensor_bytes)
        copied into a fresh block (after a synchronize), or (None, why not)."""
        library, problem = _runtime()
        if library is None:
            return None, problem
        sizes = [leaf.numel() for leaf in leaves]
        offsets, total = layout(sizes)
        pointer = ctypes.c_void_p()
        with torch.cuda.device(device):
            status = int(library.cudaMalloc(ctypes.byref(pointer), ctypes.c_size_t(total)))
            if status != 0:
                library.cudaGetLastError()
                return None, _error(library, status, f"cudaMalloc({total})")
            staging = cls(library, int(pointer.value), device)
            for leaf, offset, size in zip(leaves, offsets, sizes):
                if size:
                    device_bytes(staging.pointer + offset, size, device).copy_(leaf)
            torch.cuda.synchronize(device)
        return staging, None

    def handle(self) -> Tuple[Optional[str], Optional[str]]:
        """The block's IPC handle as hex, or (None, why not)."""
        handle = _Handle()
        with torch.cuda.device(self.device):
            status = int(self.library.cudaIpcGetMemHandle(ctypes.byref(handle), ctypes.c_void_p(self.pointer)))
        if status != 0:
            self.library.cudaGetLastError()
            return None, _error(self.library, status, "cudaIpcGetMemHandle")
        return handle_hex(handle), None

    def free(self) -> None:
        if self.pointer:
            with torch.cuda.device(self.device):
                self.library.cudaFree(ctypes.c_void_p(self.pointer))
            self.pointer = 0


def _allocation_bytes(pointer: int) -> Optional[int]:
    """The size of the allocation that starts at `pointer` (the driver's `cuMemGetAddressRange`),
    or None where the driver API cannot say."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    base, size = ctypes.c_uint64(0), ctypes.c_size_t(0)
    query = getattr(driver, "cuMemGetAddressRange_v2", None) or getattr(driver, "cuMemGetAddressRange", None)
    if query is None or int(query(ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(pointer))) != 0:
        return None
    return int(size.value) - (pointer - int(base.value))


def copy_from_handle(handle_hex: str, targets: List[torch.Tensor]) -> Optional[str]:
    """Copies the exported block's leaves into `targets` (flat uint8 views of fresh tensors of this
    process, in leaf order, at the offsets `layout` gives for their sizes: the judge's own reckoning
    from the validated header, never offsets the candidate names); None when done, else why it
    could not be (nothing was copied). A block smaller than that layout is refused before any copy,
    so a forged handle cannot make this process read past an allocation."""
    offsets, total = layout([target.numel() for target in targets])
    library, problem = _runtime()
    if library is None:
        return problem
    try:
        raw = bytes.fromhex(handle_hex)
    except ValueError:
        return "the IPC handle is not hex"
    if len(raw) != IPC_HANDLE_BYTES:
        return f"the IPC handle has {len(raw)} bytes, not {IPC_HANDLE_BYTES}"
    handle = _Handle()
    ctypes.memmove(ctypes.byref(handle), raw, IPC_HANDLE_BYTES)
    device = targets[0].device if targets else torch.device("cuda")
    pointer = ctypes.c_void_p()
    with torch.cuda.device(device):
        status = int(library.cudaIpcOpenMemHandle(ctypes.byref(pointer), handle, IPC_LAZY_ENABLE_PEER_ACCESS))
        if status != 0:
            library.cudaGetLastError()
            return _error(library, status, "cudaIpcOpenMemHandle")
        try:
            available = _allocation_bytes(int(pointer.value))
            if available is None or available < total:
                return f"the exported block holds {available} bytes where the output needs {total}"
            for target, offset in zip(targets, offsets):
                if target.numel():
                    target.copy_(device_bytes(int(pointer.value) + offset, target.numel(), device))
            torch.cuda.synchronize(device)
        finally:
            library.cudaIpcCloseMemHandle(pointer)
    return None
