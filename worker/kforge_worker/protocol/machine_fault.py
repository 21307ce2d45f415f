"""Faults of the machine, not verdicts (docs/spec.md section 3): the `fault` message.

A verdict judges the candidate. When the evaluation itself cannot go on — the reference (which
never imports the candidate) runs out of memory, kforge's own code (reading an output file,
copying an output, digests) finds no memory, the disk is full — the worker writes one `fault`
message instead of a `failure` and exits with status 0:

    {"v":1,"type":"fault","stage":"reference","resource":"device-memory",
     "message":"…","traceback":"…","memory":{"process_bytes":…,"grant_bytes":…}}

`resource` is `device-memory`, `host-memory`, `disk`, `device` (the device reported an error in
the reference, which runs no candidate code) or `time` (the reference is too slow at these sizes for
its stage's limit: roles/reference_pace.py).

In the candidate role an out-of-memory error is the machine's only when the machine can show it:
the device (or host) really has less free than the failed allocation asked for (1 GiB where its size
is not said: a vendor library's handle or workspace), and
the candidate's process holds no more than the evaluation was granted (`memory_grant_bytes` of the
request; the device's or host's whole size when absent) — an honest candidate within its grant met
another process's allocation. Otherwise it is the candidate's (`crashed`, check `oom`), and the
message says what its process held and asked for: an allocation larger than the grant, or an
"out of memory" raised while memory was free (nothing but the candidate's own code says so).
"""

import re
from typing import Optional

from .errors import (
    DISK_FULL_ERRNOS,
    StageFailure,
    describe_exception,
    format_traceback,
    is_device_error,
    is_out_of_memory,
    shorten,
)
from ..device.memory_usage import available_bytes, process_bytes, total_bytes

RESOURCES = ("device-memory", "host-memory", "disk", "device", "time")
GIB = 1024**3
_TRIED = re.compile(r"tried to allocate ([0-9.]+) ?([kmgt]i?b)", re.IGNORECASE)
_TRIED_BYTES = re.compile(r"allocate ([0-9]+) bytes", re.IGNORECASE)
_UNITS = {"k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
#: What an allocation of unknown size (a library's handle and workspace) is taken to need.
UNSIZED_REQUEST_BYTES = GIB


class MachineFault(Exception):
    """The machine could not evaluate: written as a `fault` message, never a verdict."""

    def __init__(
        self,
        resource: str,
        message: str,
        *,
        stage: Optional[str] = None,
        traceback_text: Optional[str] = None,
        memory: Optional[dict] = None,
    ):
        super().__init__(message)
        if resource not in RESOURCES:
            raise ValueError(f"unknown resource {resource!r}")
        self.resource = resource
        self.message = message
        self.stage = stage
        self.traceback_text = traceback_text
        self.memory = memory

    def message_fields(self, stage: Optional[str]) -> dict:
        fields = {"stage": self.stage or stage, "resource": self.resource, "message": self.message}
        if self.traceback_text is not None:
            fields["traceback"] = self.traceback_text
        if self.memory is not None:
            fields["memory"] = self.memory
        return fields


def gib(value: Optional[int]) -> str:
    return "an unknown amount" if value is None else f"{value / GIB:.2f} GiB"


def requested_bytes(exc: BaseException) -> Optional[int]:
    """The size of the allocation that failed, from torch's message ("Tried to allocate 7.00 GiB")."""
    text = str(exc)
    match = _TRIED.search(text)
    if match:
        return int(float(match.group(1)) * _UNITS[match.group(2)[0].lower()])
    match = _TRIED_BYTES.search(text)
    return int(match.group(1)) if match else None


def is_disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS


def memory_resource(device_type: str) -> str:
    return "device-memory" if device_type == "cuda" else "host-memory"


def fault_of(exc: BaseException, device_type: str, who: str) -> Optional[MachineFault]:
    """The fault an exception raised by kforge's own work (or the reference's) stands for, or None
    when it is neither out of memory, a full disk nor (for the reference) a device error."""
    trace = format_traceback(exc)
    if is_disk_full(exc):
        return MachineFault(
            "disk",
            shorten(
                f"{who} could not write: the disk is full ({describe_exception(exc)}); "
                f"free space in the scratch folder (TMPDIR) and evaluate again"
            ),
            traceback_text=trace,
        )
    if is_out_of_memory(exc):
        resource = memory_resource(device_type)
        held = process_bytes(device_type)
        return MachineFault(
            resource,
            shorten(
                f"{who} ran out of {'device' if resource == 'device-memory' else 'host'} memory "
                f"(an allocation of {gib(requested_bytes(exc))} failed while this process held {gib(held)}): "
                f"{describe_exception(exc)}"
            ),
            traceback_text=trace,
            memory={"process_bytes": held},
        )
    return None


def reference_fault(failure: StageFailure, device_type: str) -> Optional[MachineFault]:
    """A reference-role failure that is the machine's: out of memory, or a device error in a
    process that runs no candidate code. The problem's own faults (it raised) stay verdicts."""
    if failure.check == "oom":
        return MachineFault(
            memory_resource(device_type),
            failure.message,
            stage=failure.stage,
            traceback_text=failure.traceback_text,
            memory={"process_bytes": process_bytes(device_type)},
        )
    if failure.check == "device-error":
        return MachineFault("device", failure.message, stage=failure.stage, traceback_text=failure.traceback_text)
    return None


def candidate_oom(
    failure: StageFailure, device_type: str, grant_bytes: Optional[int], request_bytes: Optional[int] = None
) -> Exception:
    """An out-of-memory failure in the candidate role: a MachineFault when the machine can show it
    (module docs), else the candidate's StageFailure with a message that says whose allocation failed."""
    held = process_bytes(device_type)
    grant = grant_bytes if grant_bytes is not None else total_bytes(device_type)
    free = available_bytes(device_type)
    needed = (held or 0) + (request_bytes or 0)
    memory = {"process_bytes": held, "grant_bytes": grant, "request_bytes": request_bytes, "available_bytes": free}
    kind = "device" if device_type == "cuda" else "host"
    within_grant = grant is not None and needed <= grant
    # A library's handle or workspace (cuBLAS, cuDNN) fails without saying its size: the device was
    # short when it had less free than such an allocation can need.
    machine_short = free is not None and free < (request_bytes if request_bytes is not None else UNSIZED_REQUEST_BYTES)
    if within_grant and machine_short:
        message = shorten(
            f"{failure.message} — the candidate's process held {gib(held)} and asked for "
            f"{gib(request_bytes)} more, within the {gib(grant)} this evaluation was given, but the "
            f"{kind} had only {gib(free)} free: other processes hold the rest"
        )
        return MachineFault(
            memory_resource(device_type),
            message,
            stage=failure.stage,
            traceback_text=failure.traceback_text,
            memory=memory,
        )
    if not within_grant:
        why = (
            f"the candidate's own process asked for {gib(needed)} of {kind} memory ({gib(held)} held, "
            f"{gib(request_bytes)} more requested), more than the {gib(grant)} this evaluation was given"
        )
    else:
        why = (
            f"the candidate's own allocation failed while the {kind} had {gib(free)} free "
            f"(its process held {gib(held)}, asked for {gib(request_bytes)} more)"
        )
    return StageFailure(
        failure.kind,
        failure.check,
        shorten(f"{failure.message} — {why}"),
        traceback_text=failure.traceback_text,
        stage=failure.stage,
    )


def stage_failure_of(exc: BaseException) -> Optional[StageFailure]:
    """A StageFailure for an exception that escaped the stages' own classification, when it is out
    of memory or a device error (so the candidate role can apply the grant rule to it)."""
    if is_out_of_memory(exc):
        return StageFailure(
            "crashed", "oom", shorten(f"out of memory: {describe_exception(exc)}"), traceback_text=format_traceback(exc)
        )
    if is_device_error(exc):
        return StageFailure(
            "runtime_error",
            "device-error",
            shorten(f"the device reported an error: " f"{describe_exception(exc)}"),
            traceback_text=format_traceback(exc),
        )
    return None
