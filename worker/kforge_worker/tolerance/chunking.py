"""How many elements the tolerance code (compare.py, degenerate.py) handles at a time in float64.

A chunk's float64 temporaries (six at once in a comparison, beside its boolean masks) must stay
small beside the outputs whatever their size: a 6 GiB float32 output compared whole took five
12 GiB float64 copies. On a GPU a chunk is 2^24 elements (128 MiB per float64 temporary): few kernel
launches and synchronizations per output. On the host a chunk is 2^20 elements (8 MiB per
temporary), small enough to come from the C heap again once freed (memory_usage's allocator
settings); a block mapped and unmapped each time faults every page in anew (a 256 MiB output's
comparison took 2.5 s with heap-served 8 MiB chunks, 20.9 s with every block mapped).
"""

import torch

DEVICE_CHUNK_ELEMENTS = 1 << 24
HOST_CHUNK_ELEMENTS = 1 << 20


def chunk_elements(device: torch.device) -> int:
    """Elements per chunk for tensors on `device`."""
    return DEVICE_CHUNK_ELEMENTS if device.type == "cuda" else HOST_CHUNK_ELEMENTS


def spans(numel: int, device: torch.device):
    """(start, stop) of each chunk of `numel` elements on `device`."""
    step = chunk_elements(device)
    for start in range(0, numel, step):
        yield start, min(numel, start + step)
