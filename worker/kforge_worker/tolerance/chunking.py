"""How many elements the tolerance code (compare.py, degenerate.py) handles at a time in float64.

A chunk's float64 temporaries (about ten of them at once in a comparison) must stay small beside
the outputs whatever their size: a 6 GiB float32 output compared whole took five 12 GiB float64
copies. On a GPU a chunk is 2^24 elements (128 MiB per float64 temporary, about 1 GiB in all):
few kernel launches and synchronizations per output. On the host a chunk is 2^20 elements (8 MiB
per temporary): glibc serves blocks that size from its heap again once one was freed, where
larger ones are mapped and unmapped each time and every page of every temporary faults in anew
(a 256 MiB output took 65 s to compare in 2^24-element chunks, 11 s in 2^20-element ones).
"""

import torch

DEVICE_CHUNK_ELEMENTS = 1 << 24
HOST_CHUNK_ELEMENTS = 1 << 20


def chunk_elements(device: torch.device) -> int:
    """Elements per chunk for tensors on `device`."""
    return DEVICE_CHUNK_ELEMENTS if device.type == "cuda" else HOST_CHUNK_ELEMENTS
