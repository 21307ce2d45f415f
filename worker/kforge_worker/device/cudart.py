"""The CUDA runtime through ctypes: last errors, the persisting-L2 limit, stream access windows.

PyTorch does not expose `cudaGetLastError`, `cudaDeviceGetLimit(cudaLimitPersistingL2CacheSize)`
or a stream's access-policy window, so the guard calls libcudart itself. Every copy of libcudart
mapped into the process is used (`/proc/self/maps`): a candidate's extension may link its own
runtime, and each runtime keeps its own per-thread last error. Where no libcudart is mapped, the
usual sonames are tried; where none loads, `CudaRuntime.available` is False and callers skip their
check with a note. Nothing here raises: every call returns None or False when it cannot be made.
"""

import ctypes
import os
from typing import List, Optional, Tuple

CUDA_SUCCESS = 0
CUDA_ERROR_NOT_READY = 600
LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06
STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1
#: cudaStreamAttrValue is a union padded to 64 bytes from CUDA 12 on (48 before); zeros disable the window.
STREAM_ATTRIBUTE_BYTES = 64
FALLBACK_SONAMES = ("libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0")


def mapped_cudart_paths(maps_path: str = "/proc/self/maps") -> List[str]:
    """Paths of the libcudart copies mapped into this process, in map order, without repeats."""
    paths: List[str] = []
    try:
        with open(maps_path, encoding="utf-8", errors="replace") as maps:
            for line in maps:
                parts = line.split()
                if len(parts) >= 6 and "libcudart" in os.path.basename(parts[-1]) and parts[-1] not in paths:
                    paths.append(parts[-1])
    except OSError:
        return []
    return [path for path in paths if os.path.exists(path)]


def _load(path: str) -> Optional[ctypes.CDLL]:
    try:
        library = ctypes.CDLL(path)
        library.cudaGetLastError.restype = ctypes.c_int
        return library
    except (OSError, AttributeError):
        return None


class CudaRuntime:
    """The loaded CUDA runtimes; `available` is False where none could be loaded."""

    def __init__(self, libraries: List[Tuple[str, ctypes.CDLL]]):
        self.libraries = libraries

    @classmethod
    def discover(cls) -> "CudaRuntime":
        loaded = [(path, library) for path in mapped_cudart_paths() for library in [_load(path)] if library]
        if not loaded:
            for soname in FALLBACK_SONAMES:
                library = _load(soname)
                if library is not None:
                    loaded = [(soname, library)]
                    break
        return cls(loaded)

    @property
    def available(self) -> bool:
        return bool(self.libraries)

    def describe(self) -> str:
        return ", ".join(path for path, _ in self.libraries) or "none"

    def take_last_errors(self) -> List[Tuple[int, str]]:
        """Reads and clears each runtime's last error; (code, name) for each error other than
        cudaErrorNotReady (a query's answer, not a fault)."""
        errors = []
        for _, library in self.libraries:
            try:
                code = int(library.cudaGetLastError())
            except (OSError, AttributeError, ValueError):
                continue
            if code not in (CUDA_SUCCESS, CUDA_ERROR_NOT_READY):
                errors.append((code, self.error_name(library, code)))
        return errors

    @staticmethod
    def error_name(library: ctypes.CDLL, code: int) -> str:
        try:
            library.cudaGetErrorName.restype = ctypes.c_char_p
            name = library.cudaGetErrorName(ctypes.c_int(code))
            return name.decode("ascii", "replace") if name else f"cudaError {code}"
        except (OSError, AttributeError):
            return f"cudaError {code}"

    def persisting_l2_limit(self) -> Optional[int]:
        """The device's persisting-L2 limit in bytes (`cudaDeviceGetLimit`), or None."""
        for _, library in self.libraries:
            value = ctypes.c_size_t(0)
            try:
                if library.cudaDeviceGetLimit(ctypes.byref(value), LIMIT_PERSISTING_L2_CACHE_SIZE) == CUDA_SUCCESS:
                    return int(value.value)
            except (OSError, AttributeError):
                continue
        return None

    def reset_persisting_l2(self, stream_handle: Optional[int]) -> List[str]:
        """Sets the persisting-L2 limit to 0, resets persisting lines and clears the access-policy
        window of `stream_handle` (a `cudaStream_t` as an int). Returns what could not be done."""
        if not self.libraries:
            return ["no libcudart could be loaded"]
        _, library = self.libraries[0]
        problems = []
        calls = [
            (
                "cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0)",
                lambda: library.cudaDeviceSetLimit(LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(0)),
            ),
            ("cudaCtxResetPersistingL2Cache()", lambda: library.cudaCtxResetPersistingL2Cache()),
        ]
        if stream_handle is not None:
            window = ctypes.create_string_buffer(STREAM_ATTRIBUTE_BYTES)
            calls.append(
                (
                    "cudaStreamSetAttribute(accessPolicyWindow = none)",
                    lambda: library.cudaStreamSetAttribute(
                        ctypes.c_void_p(stream_handle), STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, window
                    ),
                )
            )
        for name, call in calls:
            try:
                status = int(call())
            except (OSError, AttributeError) as error:
                problems.append(f"{name}: {error}")
                continue
            if status != CUDA_SUCCESS:
                problems.append(f"{name} returned {self.error_name(library, status)}")
        self.take_last_errors()
        return problems
