"""The digest of a call's inputs (and outputs): SHA-256 over their dtypes, shapes and bytes, taken
before a candidate's call and compared after it to see inputs it changed in place (docs/hacks.md #2);
handed over with each kept output (candidate_calls.py), taken of the reference's inputs
(reference_store.py) and of outputs by deferred_work.py. On the integrity watch (timing.py).
"""

import hashlib
from typing import Any, List

import torch

from ..device.device_digest import word_digest
from ..problem.precision import FP8_DTYPES


def _update_digest(digest, value: Any) -> None:
    if isinstance(value, torch.Tensor):
        tensor = value.detach()
        digest.update(f"tensor {tensor.dtype} {tuple(tensor.shape)}\n".encode())
        if tensor.dtype in FP8_DTYPES:
            # The same bytes as uint8, a view: fp8 has few kernels of its own (its copy, on old torch).
            tensor = tensor.view(torch.uint8)
        if tensor.device.type == "cuda":
            digest.update(f"words {word_digest(tensor)}\n".encode())
            return
        flat = tensor.contiguous().reshape(-1)
        if flat.numel():
            digest.update(flat.view(torch.uint8).numpy())
    elif isinstance(value, (list, tuple)):
        digest.update(f"{type(value).__name__} {len(value)}\n".encode())
        for item in value:
            _update_digest(digest, item)
    else:
        digest.update(f"{type(value).__name__} {value!r}\n".encode())


def input_digest(values: List[Any]) -> str:
    """SHA-256 over the inputs' dtypes, shapes and bytes (hex), to detect in-place mutation; a cuda
    tensor's bytes enter as their device digest (device_digest.py), not copied to the host."""
    digest = hashlib.sha256()
    _update_digest(digest, values)
    return digest.hexdigest()
