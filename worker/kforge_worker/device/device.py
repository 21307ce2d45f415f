"""Device-wide synchronisation (the request's device is chosen by protocol/run_device.py)."""

import torch


def synchronize(device: torch.device) -> None:
    """Waits for all work on the device (every stream). A no-op on cpu."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
