"""How a role's end becomes a `failure` (a verdict) or a `fault` (the machine's; machine_fault.py).

Reference role (it never imports the candidate): out of memory and device errors are faults,
wherever they happen; the problem's own errors stay `invalid_input`. Candidate role: out of
memory is judged by the grant (machine_fault.candidate_oom), a full disk is a fault; everything
else is the stage's own verdict. Exceptions that none of this explains are left to the caller (a
fault of the worker itself: exit status 1 with a traceback).
"""

from typing import Optional, Tuple

from .channel import ProtocolError
from .errors import StageFailure
from .machine_fault import MachineFault, candidate_oom, fault_of, reference_fault, requested_bytes, stage_failure_of
from .stages import stage_of

Report = Tuple[str, dict]


def device_type_of(message: dict) -> str:
    device = message.get("device")
    return "cuda" if isinstance(device, str) and device.startswith("cuda") else "cpu"


def memory_grant(message: dict) -> Optional[int]:
    """The request's `memory_grant_bytes` (absent or null: the device's whole size)."""
    value = message.get("memory_grant_bytes")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ProtocolError(f"expected `memory_grant_bytes` to be a positive integer, got {value!r}")
    return value


def _fault(fault: MachineFault) -> Report:
    return "fault", fault.message_fields(fault.stage)


def _failure(failure: StageFailure) -> Report:
    return "failure", failure.message_fields()


def report_failure(
    role: str, failure: StageFailure, device_type: str, grant: Optional[int], request_bytes: Optional[int] = None
) -> Report:
    """The message for a StageFailure a role raised."""
    if role == "reference":
        fault = reference_fault(failure, device_type)
        return _fault(fault) if fault is not None else _failure(failure)
    if failure.check == "oom":
        judged = candidate_oom(
            failure, device_type, grant, request_bytes if request_bytes is not None else requested_bytes(failure)
        )
        return _fault(judged) if isinstance(judged, MachineFault) else _failure(judged)
    return _failure(failure)


def report_exception(role: str, error: BaseException, device_type: str, grant: Optional[int]) -> Optional[Report]:
    """The message for an exception that escaped the stages' own classification, or None (a fault
    of the worker itself)."""
    who = (
        "the reference process (which never imports the candidate)"
        if role == "reference"
        else "kforge's own code in the candidate process"
    )
    disk = fault_of(error, device_type, who)
    if disk is not None and disk.resource == "disk":
        disk.stage = stage_of(error)
        return _fault(disk)
    failure = stage_failure_of(error)
    if failure is None:
        return None
    failure.stage = stage_of(error)
    return report_failure(role, failure, device_type, grant, requested_bytes(error))
