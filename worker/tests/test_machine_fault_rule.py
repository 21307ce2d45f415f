"""machine_fault.candidate_oom: whose out-of-memory an allocation failure in the candidate is."""

import pytest

from kforge_worker.protocol import errors, machine_fault
from kforge_worker.protocol.errors import StageFailure
from kforge_worker.protocol.machine_fault import GIB, MachineFault, candidate_oom

CUBLAS = RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")


def _device(monkeypatch, *, held: int, free: int, total: int = 140 * GIB) -> None:
    monkeypatch.setattr(machine_fault, "process_bytes", lambda device_type: held)
    monkeypatch.setattr(machine_fault, "available_bytes", lambda device_type: free)
    monkeypatch.setattr(machine_fault, "total_bytes", lambda device_type: total)


def _oom(message: str) -> StageFailure:
    return StageFailure("crashed", "oom", message, stage="correctness")


def test_a_vendor_library_that_cannot_allocate_its_handle_is_out_of_memory():
    assert errors.is_out_of_memory(CUBLAS)
    assert errors.is_out_of_memory(RuntimeError("cuDNN error: CUDNN_STATUS_ALLOC_FAILED"))
    assert not errors.is_out_of_memory(RuntimeError("CUBLAS_STATUS_EXECUTION_FAILED"))


def test_an_unsized_library_allocation_on_a_full_device_is_the_machines(monkeypatch):
    _device(monkeypatch, held=3 * GIB, free=200 * 1024**2)
    judged = candidate_oom(_oom(str(CUBLAS)), "cuda", grant_bytes=20 * GIB)
    assert isinstance(judged, MachineFault)
    assert judged.resource == "device-memory"
    assert "other processes hold the rest" in judged.message


def test_an_unsized_library_allocation_with_room_free_is_the_candidates(monkeypatch):
    _device(monkeypatch, held=3 * GIB, free=60 * GIB)
    judged = candidate_oom(_oom(str(CUBLAS)), "cuda", grant_bytes=20 * GIB)
    assert isinstance(judged, StageFailure) and judged.check == "oom"


@pytest.mark.parametrize("held", [25 * GIB])
def test_past_its_grant_the_failure_is_the_candidates_even_on_a_full_device(monkeypatch, held):
    _device(monkeypatch, held=held, free=100 * 1024**2)
    judged = candidate_oom(_oom(str(CUBLAS)), "cuda", grant_bytes=20 * GIB)
    assert isinstance(judged, StageFailure)
    assert "more than the 20.00 GiB this evaluation was given" in judged.message
