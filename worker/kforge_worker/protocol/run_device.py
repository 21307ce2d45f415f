"""The device a request names: the backend and device pair checked, and the CUDA device selected.
A pair that does not fit, or a device torch does not see, is the request's fault (ProtocolError)."""

import torch

from .channel import ProtocolError

GPU_BACKENDS = ("cuda", "triton")
BACKENDS = ("cpu",) + GPU_BACKENDS


def resolve_device(backend: str, device: str) -> torch.device:
    """`cpu` on the cpu backend, `cuda:N` (or `cuda`) on cuda/triton; selects the CUDA device.

    Raises ProtocolError when the pair does not fit or the device does not exist.
    """
    if backend not in BACKENDS:
        raise ProtocolError(f"expected `backend` to be one of {', '.join(BACKENDS)}, got {backend!r}")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ProtocolError(f"expected `device` to be `cpu` or `cuda:N`, got {device!r}") from error
    if backend == "cpu":
        if resolved.type != "cpu":
            raise ProtocolError(f"the cpu backend runs on device `cpu`, got {device!r}")
        return resolved
    if resolved.type != "cuda":
        raise ProtocolError(f"the {backend} backend runs on `cuda:N`, got {device!r}")
    if not torch.cuda.is_available():
        raise ProtocolError(f"the {backend} backend needs a CUDA device, and torch sees none")
    index = 0 if resolved.index is None else resolved.index
    if index >= torch.cuda.device_count():
        raise ProtocolError(f"device {device!r} does not exist: torch sees {torch.cuda.device_count()} CUDA devices")
    torch.cuda.set_device(index)
    return torch.device("cuda", index)
