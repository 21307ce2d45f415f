"""What this process holds in memory, and its peaks per stage (the `memory` of a stage's `end`).

Device: the CUDA caching allocator's reserved bytes on the current device (what the process takes
from the GPU for tensors; the CUDA context itself, a few hundred MiB, is not counted) and its
peak since the stage started. Host: the resident set (`/proc/self/statm`) and its high-water mark
(`VmHWM` in `/proc/self/status`), reset at each stage's start by writing 5 to
`/proc/self/clear_refs` (Linux); where that cannot be done the mark is the process's peak so far.
"""

import ctypes
import os
from typing import Optional

import torch

_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _cuda_ready() -> bool:
    try:
        return torch.cuda.is_available() and torch.cuda.is_initialized()
    except Exception:
        return False


def resident_bytes() -> Optional[int]:
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * _PAGE_BYTES
    except (OSError, ValueError, IndexError):
        return None


def _status_kib(field: str) -> Optional[int]:
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def host_total_bytes() -> Optional[int]:
    try:
        with open("/proc/meminfo", encoding="ascii", errors="replace") as meminfo:
            for line in meminfo:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def available_bytes(device_type: str) -> Optional[int]:
    """Bytes the device (`cuda`: free device memory) or host (`cpu`: MemAvailable) could give now."""
    if device_type == "cuda":
        try:
            return int(torch.cuda.mem_get_info()[0]) if _cuda_ready() else None
        except Exception:
            return None
    try:
        with open("/proc/meminfo", encoding="ascii", errors="replace") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def process_bytes(device_type: str) -> Optional[int]:
    """Bytes this process holds on the device (`cuda`: reserved by the allocator) or host (`cpu`)."""
    if device_type == "cuda":
        return int(torch.cuda.memory_reserved()) if _cuda_ready() else 0
    return resident_bytes()


def total_bytes(device_type: str) -> Optional[int]:
    """The device's memory (`cuda`) or the host's (`cpu`), in bytes."""
    if device_type == "cuda":
        try:
            return int(torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory)
        except Exception:
            return None
    return host_total_bytes()


def _malloc_trim():
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_MALLOC_TRIM = _malloc_trim()


def trim_host() -> None:
    """Gives the free pages of the C heap back to the host (glibc's `malloc_trim`). Blocks up to
    32 MiB come from the heap once a block that size was freed (the tolerance code's float64
    chunks, chunking.py), and the heap keeps what its holes free: without this a cpu evaluation's
    reference role kept ~200 MiB it no longer used after a few judged trials of 32 MiB outputs."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def release_cached() -> None:
    """Gives the allocator's cached device blocks back to the device, so that the other process of
    the evaluation (which holds the device at the same time) can use them, and the C heap's free
    pages back to the host (`trim_host`)."""
    if _cuda_ready():
        torch.cuda.empty_cache()
    trim_host()


class StagePeaks:
    """Peaks of one stage: `start()` resets them, `end()` reads them (bytes, null where unknown)."""

    def start(self) -> None:
        if _cuda_ready():
            try:
                torch.cuda.reset_peak_memory_stats()
            except Exception:
                pass
        try:
            with open("/proc/self/clear_refs", "w", encoding="ascii") as clear_refs:
                clear_refs.write("5")
        except OSError:
            pass

    def end(self) -> dict:
        device_peak = None
        if _cuda_ready():
            try:
                device_peak = int(torch.cuda.max_memory_reserved())
            except Exception:
                device_peak = None
        return {"device_peak_bytes": device_peak, "host_peak_bytes": _status_kib("VmHWM")}
