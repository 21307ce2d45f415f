"""What the cuda and triton backends share: an NVIDIA GPU through torch.cuda, its device, its
architecture for extension builds, and its clock (CUDA events)."""

import os

from .backend import Clock, DeviceMismatch, Device

#: How a request names a CUDA device.
SPELLING = "`cuda:N`"


def resolve_device(backend: str, resolved: Device, spelled: str) -> Device:
    """`cuda:N` (or `cuda`, device 0) made current; DeviceMismatch when it is no CUDA device or
    torch does not see it."""
    import torch

    if resolved.type != "cuda":
        raise DeviceMismatch(f"the {backend} backend runs on `cuda:N`, got {spelled!r}")
    if not torch.cuda.is_available():
        raise DeviceMismatch(f"the {backend} backend needs a CUDA device, and torch sees none")
    index = 0 if resolved.index is None else resolved.index
    if index >= torch.cuda.device_count():
        raise DeviceMismatch(f"device {spelled!r} does not exist: torch sees {torch.cuda.device_count()} CUDA devices")
    torch.cuda.set_device(index)
    return torch.device("cuda", index)


def _accepted(arch_list: str) -> bool:
    """Whether this torch's cpp_extension takes `arch_list` as TORCH_CUDA_ARCH_LIST."""
    try:
        from torch.utils.cpp_extension import _get_cuda_arch_flags
    except ImportError:
        return False
    previous = os.environ.get("TORCH_CUDA_ARCH_LIST")
    os.environ["TORCH_CUDA_ARCH_LIST"] = arch_list
    try:
        _get_cuda_arch_flags()
        return True
    except (ValueError, RuntimeError):
        return False
    finally:
        if previous is None:
            del os.environ["TORCH_CUDA_ARCH_LIST"]
        else:
            os.environ["TORCH_CUDA_ARCH_LIST"] = previous


def cuda_arch_list(device: Device) -> str:
    """The device's own architecture for TORCH_CUDA_ARCH_LIST, with its PTX embedded beside the
    machine code (`+PTX`: `build-info` reads both back with cuobjdump; without it the fatbin holds
    no PTX to show): `9.0a+PTX` on capability 9.0 (the arch-specific variant from 9.0 on), `8.6+PTX`
    on 8.6; the first of those forms, then the plain one, that this torch accepts."""
    import torch

    major, minor = torch.cuda.get_device_capability(device)
    plain = f"{major}.{minor}"
    forms = [plain + "a+PTX", plain + "a"] if major >= 9 else []
    forms += [plain + "+PTX"]
    return next((form for form in forms if _accepted(form)), plain)


def configure_build(device: Device) -> None:
    """Extensions build for the device's own architecture (`cuda_arch_list`)."""
    os.environ["TORCH_CUDA_ARCH_LIST"] = cuda_arch_list(device)


#: CUDA events on the call's stream; a device-wide synchronize.
CLOCK = Clock(device_events=True)
