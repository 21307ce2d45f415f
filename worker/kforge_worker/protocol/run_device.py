"""The device a request names: the backend and device pair checked, and the device selected (the
backend's `detect`, backends/). A pair that does not fit, or a device torch does not see, is the
request's fault (ProtocolError)."""

import torch

from ..backends.backend import Backend, DeviceMismatch
from ..backends.registry import backend_for_device, device_spellings
from .channel import ProtocolError


def _parsed(device: str) -> torch.device:
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ProtocolError(f"expected `device` to be {device_spellings()}, got {device!r}") from error


def resolve_device(backend: Backend, device: str) -> torch.device:
    """`cpu` on the cpu backend, `cuda:N` (or `cuda`) on the GPU backends; selects the CUDA device.

    Raises ProtocolError when the pair does not fit or the device does not exist.
    """
    resolved = _parsed(device)
    try:
        return backend.detect.resolve(resolved, device)
    except DeviceMismatch as error:
        raise ProtocolError(str(error)) from None


def backend_of_device(device: str) -> Backend:
    """The backend that runs a device named alone (the audit's `--device`): the first of the
    registry that runs on its type (on `cuda:N`, the cuda backend)."""
    backend = backend_for_device(_parsed(device).type)
    if backend is None:
        raise ProtocolError(f"expected `device` to be {device_spellings()}, got {device!r}")
    return backend
