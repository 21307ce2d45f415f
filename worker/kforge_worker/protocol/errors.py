"""Failures of a stage as data: `StageFailure`, and the mapping of exceptions to (kind, check).

`kind` is a verdict (docs/spec.md section 3); `check` a stable id of docs/worker-protocol.md.
"""

import errno
import traceback
from contextlib import contextmanager
from typing import Iterator, Optional

from ..backends.registry import compile_error_subject

MAX_MESSAGE_CHARS = 600
MAX_TRACEBACK_CHARS = 64 * 1024

DEVICE_ERROR_MARKERS = (
    "illegal memory access",
    "unspecified launch failure",
    "device-side assert",
    "misaligned address",
    "illegal instruction",
    "an illegal",
    "launch timed out",
    "cuda error",
    "cublas_status_execution_failed",
)
OUT_OF_MEMORY_MARKERS = (
    "out of memory",
    "can't allocate memory",
    # A vendor library that could not allocate its handle or workspace: the same
    # resource, reported by cuBLAS, cuBLASLt, cuDNN, cuSPARSE, cuSOLVER, cuFFT, cuRAND.
    "status_alloc_failed",
    "status_allocation_failed",
    "cufft_alloc_failed",
)
DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)


class StageFailure(Exception):
    """A stage failed in a way that is a verdict, not a bug of the worker."""

    def __init__(
        self,
        kind: str,
        check: str,
        message: str,
        *,
        traceback_text: Optional[str] = None,
        compiler_output: Optional[str] = None,
        stage: Optional[str] = None,
    ):
        super().__init__(message)
        self.kind = kind
        self.check = check
        self.message = message
        self.traceback_text = traceback_text
        self.compiler_output = compiler_output
        self.stage = stage

    def message_fields(self) -> dict:
        """The fields of the protocol's `failure` message (without `v` and `type`)."""
        fields = {"stage": self.stage, "kind": self.kind, "check": self.check, "message": self.message}
        if self.compiler_output is not None:
            fields["compiler_output"] = self.compiler_output
        if self.traceback_text is not None:
            fields["traceback"] = self.traceback_text
        return fields


def first_line(text: str) -> str:
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()
    return ""


def shorten(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_exception(exc: BaseException) -> str:
    """`TypeName: first line of the message`."""
    line = first_line(str(exc))
    return f"{type(exc).__name__}: {line}" if line else type(exc).__name__


def format_traceback(exc: BaseException) -> str:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return text if len(text) <= MAX_TRACEBACK_CHARS else text[-MAX_TRACEBACK_CHARS:]


def is_out_of_memory(exc: BaseException) -> bool:
    oom_class = getattr(getattr(_torch(), "cuda", None), "OutOfMemoryError", None)
    if oom_class is not None and isinstance(exc, oom_class):
        return True
    if isinstance(exc, MemoryError):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and any(marker in text for marker in OUT_OF_MEMORY_MARKERS)


def is_device_error(exc: BaseException) -> bool:
    if type(exc).__name__ == "AcceleratorError":
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and any(marker in text for marker in DEVICE_ERROR_MARKERS)


def _torch():
    import torch

    return torch


def classify(exc: BaseException, kind: str, check: str, context: str) -> StageFailure:
    """Maps an exception raised by problem or candidate code to a StageFailure.

    A backend compiler's refusal (a Triton compile error; backends/), out-of-memory and device
    errors override the caller's (kind, check);
    `context` starts the message ("the candidate's forward raised").
    """
    described = describe_exception(exc)
    trace = format_traceback(exc)
    subject = compile_error_subject(exc)
    if subject is not None:
        return StageFailure(
            "compile_error",
            "build",
            shorten(f"{subject} did not compile: {described}"),
            traceback_text=trace,
            compiler_output=str(exc),
        )
    if is_out_of_memory(exc):
        return StageFailure("crashed", "oom", shorten(f"{context} out of memory: {described}"), traceback_text=trace)
    if is_device_error(exc):
        return StageFailure(
            "runtime_error",
            "device-error",
            shorten(f"{context}; the device reported an error: {described}"),
            traceback_text=trace,
        )
    return StageFailure(kind, check, shorten(f"{context}: {described}"), traceback_text=trace)


#: `failures_as` contexts of the candidate's calls: building its model, and its forward.
CONSTRUCT = dict(kind="runtime_error", check="construct", context="ModelNew(*get_init_inputs()) raised")
FORWARD = dict(kind="runtime_error", check="forward", context="the candidate's forward raised")


@contextmanager
def failures_as(kind: str, check: str, context: str) -> Iterator[None]:
    """Turns any exception (and SystemExit) raised inside the block into a StageFailure, except a
    full disk (left to the role's end, where it becomes a `fault`)."""
    try:
        yield
    except StageFailure:
        raise
    except OSError as exc:
        if exc.errno in DISK_FULL_ERRNOS:  # the machine's (machine_fault.py), never a verdict
            raise
        raise classify(exc, kind, check, context) from exc
    except (Exception, SystemExit) as exc:
        raise classify(exc, kind, check, context) from exc
