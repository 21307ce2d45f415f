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


def _libc():
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc
        return None


_LIBC = _libc()
_MALLOC_TRIM = getattr(_LIBC, "malloc_trim", None)
_MALLOPT = getattr(_LIBC, "mallopt", None)
#: glibc's mallopt parameters and the values set: blocks up to 32 MiB (the most glibc allows) come
#: from the heap, and freed heap pages stay with the process until trim_host gives them back.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
HEAP_BLOCK_BYTES = 32 * 1024**2
KEPT_FREE_BYTES = 2**31 - 1


def steady_host_allocator() -> bool:
    """Makes the C heap reuse freed blocks instead of giving them to the host at once (glibc).

    By default glibc maps each block over its (adaptive) threshold anew and unmaps it when freed,
    and gives the heap's free top back to the host past 128 KiB: every call that allocates an
    output of a few MiB then faults each page in again. On a host where faults are dear (a virtual
    machine) that was most of a call's time and moved with the allocator's state: an 8 MiB-output
    tanh took 4.6 ms into a given tensor and 21-30 ms into a new one, and a batch of calls that each
    keep a new output (the trusted batches) timed 5x slower than the same calls one at a time. Set
    in both roles at start, so the candidate and the baselines are timed alike; the stages still
    give memory back where they hand over (trim_host). Returns whether the settings took."""
    if _MALLOPT is None:
        return False
    return bool(_MALLOPT(M_MMAP_THRESHOLD, HEAP_BLOCK_BYTES)) and bool(_MALLOPT(M_TRIM_THRESHOLD, KEPT_FREE_BYTES))


def trim_host() -> None:
    """Gives the free pages of the C heap back to the host (glibc's `malloc_trim`). Blocks up to
    32 MiB come from the heap (steady_host_allocator) and the heap keeps what its holes free:
    without this a cpu evaluation's reference role kept 78-106 MiB it no longer used after judging
    a trial of a 32 MiB output (the comparison's float64 chunks, chunking.py)."""
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
        device_peak = allocated_peak = None
        if _cuda_ready():
            try:
                device_peak = int(torch.cuda.max_memory_reserved())
                allocated_peak = int(torch.cuda.max_memory_allocated())
            except Exception:
                device_peak = allocated_peak = None
        return {
            "device_peak_bytes": device_peak,
            "device_allocated_peak_bytes": allocated_peak,
            "host_peak_bytes": _status_kib("VmHWM"),
        }
