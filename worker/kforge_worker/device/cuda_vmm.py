"""Device memory shared by file descriptor for the output hand-over (the CUDA driver's VMM API).

The candidate's worker copies an output's leaves into one allocation of its own made with
`cuMemCreate` for sharing as a POSIX file descriptor (`ExportedBlock`, leaves at 256-byte aligned
offsets), and exports it (`cuMemExportToShareableHandle`). The descriptor reaches the judge (the
reference worker, which never runs candidate code) over the hand-over socket
(handover_socket.py); the judge imports it, maps it, copies each leaf into memory of its own on
its own stream, synchronizes, and unmaps and releases it (`copy_from_descriptor`). The candidate's
process never learns where the judge's copy lives, so nothing it does after the copy changes it.

A descriptor rather than the runtime's legacy IPC handle (`cudaIpcGetMemHandle`): a legacy handle
names its exporter by process id, and cannot be opened from another PID namespace (the driver
answers cudaErrorDeviceUninitialized, as on the H100 on 2026-12-07); both workers run in PID
namespaces of their own. A descriptor is a reference to the memory itself, whoever holds it.

Everything here returns an error text instead of raising where the driver refuses (no libcuda, an
allocation type the device lacks, a descriptor that is not a CUDA allocation): the hand-over then
falls back to the pipe (handover.py).
"""

import ctypes
import os
from typing import List, Optional, Tuple

import torch

ALIGNMENT_BYTES = 256
ALLOCATION_TYPE_PINNED = 1
HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1
LOCATION_TYPE_DEVICE = 1
ACCESS_READ_WRITE = 3
GRANULARITY_MINIMUM = 0
CUDA_SUCCESS = 0


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocationFlags(ctypes.Structure):
    _fields_ = [
        ("compressionType", ctypes.c_ubyte),
        ("gpuDirectRDMACapable", ctypes.c_ubyte),
        ("usage", ctypes.c_ushort),
        ("reserved", ctypes.c_ubyte * 4),
    ]


class _AllocationProperties(ctypes.Structure):
    """CUmemAllocationProp."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("requestedHandleTypes", ctypes.c_int),
        ("location", _Location),
        ("win32HandleMetaData", ctypes.c_void_p),
        ("allocFlags", _AllocationFlags),
    ]


class _AccessDescription(ctypes.Structure):
    """CUmemAccessDesc."""

    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


class DriverError(Exception):
    """A driver call that did not return CUDA_SUCCESS; the message names the call and the error."""


_DRIVER: List[Optional[ctypes.CDLL]] = []


def _driver() -> ctypes.CDLL:
    if not _DRIVER:
        try:
            _DRIVER.append(ctypes.CDLL("libcuda.so.1"))
        except OSError:
            _DRIVER.append(None)
    if _DRIVER[0] is None:
        raise DriverError("the CUDA driver library (libcuda.so.1) could not be loaded")
    return _DRIVER[0]


def _call(name: str, *arguments) -> None:
    driver = _driver()
    function = getattr(driver, name, None)
    if function is None:
        raise DriverError(f"the CUDA driver has no {name}")
    status = int(function(*arguments))
    if status != CUDA_SUCCESS:
        text = ctypes.c_char_p()
        driver.cuGetErrorName(status, ctypes.byref(text))
        raise DriverError(f"{name} returned {text.value.decode() if text.value else status}")


def _properties(ordinal: int) -> _AllocationProperties:
    properties = _AllocationProperties()
    properties.type = ALLOCATION_TYPE_PINNED
    properties.requestedHandleTypes = HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
    properties.location = _Location(LOCATION_TYPE_DEVICE, ordinal)
    return properties


def _ordinal(device: torch.device) -> int:
    return device.index if device.index is not None else torch.cuda.current_device()


class _PrimaryContext:
    """The device's primary context (the one PyTorch uses) made current for a few driver calls."""

    def __init__(self, ordinal: int):
        self.ordinal = ordinal
        self.device = ctypes.c_int()
        self.context = ctypes.c_void_p()

    def __enter__(self):
        _call("cuDeviceGet", ctypes.byref(self.device), self.ordinal)
        _call("cuDevicePrimaryCtxRetain", ctypes.byref(self.context), self.device)
        _call("cuCtxPushCurrent_v2", self.context)
        return self

    def __exit__(self, *_):
        popped = ctypes.c_void_p()
        _driver().cuCtxPopCurrent_v2(ctypes.byref(popped))
        _driver().cuDevicePrimaryCtxRelease_v2(self.device)


def block_bytes(sizes: List[int], ordinal: int) -> Tuple[List[int], int]:
    """(offset of each leaf, the allocation's size): leaves at ALIGNMENT_BYTES boundaries, the
    whole rounded up to the device's allocation granularity. Both sides reckon it from the header,
    so the judge never maps a size the candidate named."""
    offsets, total = [], 0
    for size in sizes:
        offsets.append(total)
        total += -(-size // ALIGNMENT_BYTES) * ALIGNMENT_BYTES
    granularity = ctypes.c_size_t()
    properties = _properties(ordinal)
    _call("cuMemGetAllocationGranularity", ctypes.byref(granularity), ctypes.byref(properties), GRANULARITY_MINIMUM)
    step = max(int(granularity.value), 1)
    return offsets, max(-(-total // step) * step, step)


def device_bytes(pointer: int, nbytes: int, device: torch.device) -> torch.Tensor:
    """A uint8 tensor over `nbytes` of device memory at `pointer` (no copy, no ownership)."""

    class Region:
        __cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (pointer, False), "version": 3}

    with torch.cuda.device(device):
        return torch.as_tensor(Region(), device=device)


class _Mapping:
    """An allocation handle mapped at an address range of this process, read-write for the device."""

    def __init__(self, handle: int, size: int, ordinal: int):
        """Takes over `handle` (released here if the mapping fails)."""
        self.handle, self.size, self.pointer, self.reserved = handle, size, 0, 0
        try:
            address = ctypes.c_uint64()
            _call(
                "cuMemAddressReserve",
                ctypes.byref(address),
                ctypes.c_size_t(size),
                ctypes.c_size_t(0),
                ctypes.c_uint64(0),
                ctypes.c_uint64(0),
            )
            self.reserved = int(address.value)
            _call(
                "cuMemMap",
                address,
                ctypes.c_size_t(size),
                ctypes.c_size_t(0),
                ctypes.c_uint64(handle),
                ctypes.c_uint64(0),
            )
            self.pointer = self.reserved
            access = _AccessDescription(_Location(LOCATION_TYPE_DEVICE, ordinal), ACCESS_READ_WRITE)
            _call("cuMemSetAccess", address, ctypes.c_size_t(size), ctypes.byref(access), ctypes.c_size_t(1))
        except DriverError:
            self.close()
            raise

    def close(self) -> None:
        """Unmaps the range, frees it, and releases this process's reference to the allocation."""
        driver = _driver()
        if self.pointer:
            driver.cuMemUnmap(ctypes.c_uint64(self.pointer), ctypes.c_size_t(self.size))
            self.pointer = 0
        if self.reserved:
            driver.cuMemAddressFree(ctypes.c_uint64(self.reserved), ctypes.c_size_t(self.size))
            self.reserved = 0
        if self.handle:
            driver.cuMemRelease(ctypes.c_uint64(self.handle))
            self.handle = 0


class ExportedBlock:
    """One allocation holding an output's tensor leaves, with a descriptor for the judge."""

    def __init__(self, mapping: _Mapping, descriptor: int, device: torch.device):
        self.mapping, self.descriptor, self.device = mapping, descriptor, device

    @classmethod
    def of(cls, leaves: List[torch.Tensor], device: torch.device) -> Tuple[Optional["ExportedBlock"], Optional[str]]:
        """The leaves (flat uint8 views of contiguous tensors: output_wire.tensor_bytes) copied into a
        fresh shareable allocation after a synchronize, with its descriptor; or (None, why not)."""
        ordinal = _ordinal(device)
        try:
            with _PrimaryContext(ordinal):
                offsets, total = block_bytes([leaf.numel() for leaf in leaves], ordinal)
                handle = ctypes.c_uint64()
                properties = _properties(ordinal)
                _call(
                    "cuMemCreate",
                    ctypes.byref(handle),
                    ctypes.c_size_t(total),
                    ctypes.byref(properties),
                    ctypes.c_uint64(0),
                )
                mapping = _Mapping(int(handle.value), total, ordinal)
                try:
                    descriptor = ctypes.c_int(-1)
                    _call(
                        "cuMemExportToShareableHandle",
                        ctypes.byref(descriptor),
                        ctypes.c_uint64(mapping.handle),
                        HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                        ctypes.c_uint64(0),
                    )
                except DriverError:
                    mapping.close()
                    raise
        except DriverError as error:
            return None, str(error)
        block = cls(mapping, int(descriptor.value), device)
        for leaf, offset in zip(leaves, offsets):
            if leaf.numel():
                device_bytes(mapping.pointer + offset, leaf.numel(), device).copy_(leaf)
        torch.cuda.synchronize(device)
        return block, None

    def free(self) -> None:
        if self.descriptor >= 0:
            os.close(self.descriptor)
            self.descriptor = -1
        with _PrimaryContext(_ordinal(self.device)):
            self.mapping.close()


def copy_from_descriptor(descriptor: int, targets: List[torch.Tensor]) -> Optional[str]:
    """Copies the exported allocation's leaves into `targets` (flat uint8 views of fresh tensors of
    this process, in leaf order, at the offsets `block_bytes` gives for their sizes: the judge's own
    reckoning from the validated header); None when done, else why not (nothing was copied). An
    allocation smaller than that size cannot be mapped, so a forged descriptor cannot make this
    process read past it. The descriptor stays the caller's to close."""
    device = targets[0].device if targets else torch.device("cuda")
    ordinal = _ordinal(device)
    try:
        with _PrimaryContext(ordinal):
            offsets, total = block_bytes([target.numel() for target in targets], ordinal)
            handle = ctypes.c_uint64()
            _call(
                "cuMemImportFromShareableHandle",
                ctypes.byref(handle),
                ctypes.c_void_p(descriptor),
                HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            )
            mapping = _Mapping(int(handle.value), total, ordinal)
            try:
                for target, offset in zip(targets, offsets):
                    if target.numel():
                        target.copy_(device_bytes(mapping.pointer + offset, target.numel(), device))
                torch.cuda.synchronize(device)
            finally:
                mapping.close()
    except DriverError as error:
        return str(error)
    return None
