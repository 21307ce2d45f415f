"""A digest of a tensor's bytes computed where the tensor lives, for tensors on a cuda device.

Copying a GPU-sized input (1 GiB) to the host and hashing it there costs about 1.7 s on an H200
host (docs/benchmarks/eval-h200.md); this costs milliseconds. The bytes are read as 32-bit words
w_i (any tail of fewer than 4 bytes is returned as is); each word is combined with its index,
x_i = (i << 32) | w_i, and mixed with the splitmix64 finaliser under two different keys; the two
64-bit digests are the wrapping sums of the mixed values. Integer addition is associative, so the
result does not depend on how the device orders the reduction: the same bytes give the same
digest in any process and on any device. Changing any byte changes a mixed term, so the sums
differ unless another change cancels it exactly: the purpose is to see inputs a candidate changed
in place (docs/hacks.md #2), not to resist a forger (who runs in the same process as the hash).
"""

from typing import Tuple

import torch

KEYS = (0x9E3779B97F4A7C15, 0xD1B54A32D192ED03)
MULTIPLIERS = (0xBF58476D1CE4E5B9, 0x94D049BB133111EB)
#: Words per chunk: a chunk's int64 temporaries (about six at once) are what the digest holds beyond
#: its input, 768 MiB at 2^24 words. At 2^26 they were 3 GiB (measured on the CPU with a 2 GiB
#: input: the resident peak grew 3.01 GiB, and 0.76 GiB at 2^24), beside a KernelBench-sized
#: input and output. The price is four times as many chunks' launches (96 for a 6 GiB input).
CHUNK_WORDS = 1 << 24


def _signed(value: int) -> int:
    """An unsigned 64-bit constant as the int64 torch holds it."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _shift_right(values: torch.Tensor, bits: int) -> torch.Tensor:
    """Logical right shift of int64 values (torch's >> is arithmetic)."""
    return (values >> bits) & ((1 << (64 - bits)) - 1)


def _mixed(values: torch.Tensor, key: int) -> torch.Tensor:
    values = values ^ _signed(key)
    values = values ^ _shift_right(values, 30)
    values = values * _signed(MULTIPLIERS[0])
    values = values ^ _shift_right(values, 27)
    values = values * _signed(MULTIPLIERS[1])
    return values ^ _shift_right(values, 31)


def _word_view(tensor: torch.Tensor) -> Tuple[torch.Tensor, bytes]:
    """(the whole 32-bit words of the tensor's bytes, the remaining tail bytes)."""
    data = tensor.detach().contiguous().reshape(-1)
    if data.storage_offset() * data.element_size() % 4:
        data = data.clone()
    raw = data.view(torch.uint8) if data.dtype != torch.uint8 else data
    whole = raw.numel() // 4 * 4
    tail = bytes(raw[whole:].cpu().tolist()) if whole < raw.numel() else b""
    if whole and raw.storage_offset() % 4:
        raw = raw.clone()
    return raw[:whole].view(torch.int32), tail


def word_digest(tensor: torch.Tensor) -> str:
    """`<hex64>-<hex64>-<tail hex>` over the tensor's bytes, computed on its device."""
    words, tail = _word_view(tensor)
    sums = [torch.zeros((), dtype=torch.int64, device=words.device) for _ in KEYS]
    for start in range(0, words.numel(), CHUNK_WORDS):
        chunk = words[start : start + CHUNK_WORDS].to(torch.int64) & 0xFFFFFFFF
        index = torch.arange(start, start + chunk.numel(), dtype=torch.int64, device=words.device)
        combined = (index << 32) | chunk
        for position, key in enumerate(KEYS):
            sums[position] += _mixed(combined, key).sum()
    values = [int(total.item()) & ((1 << 64) - 1) for total in sums]
    return f"{values[0]:016x}-{values[1]:016x}-{tail.hex()}"
