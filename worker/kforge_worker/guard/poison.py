"""Poisoning freed memory before a call, and finding outputs that still hold the poison (docs/hacks.md #1, #14).

Before a call, `poison_allocator(sizes, device)` allocates blocks of each given byte size, fills
them with the 32-bit word 0x7FA5A5A5 (a float32 NaN no arithmetic produces: its payload is
arbitrary) and frees them. The next allocation of that size gets one of these blocks back: on
cuda the caching allocator returns the best-fitting free block of the stream; on cpu glibc's
malloc returns the chunk just freed, best effort: reliably from about 2 KiB up to its mmap
threshold (at most 32 MiB: larger blocks are returned to the system and a new allocation reads
as zeros, so they are not poisoned); below about 1 KiB freed chunks sit in glibc's per-size
caches, which the aligned allocation torch makes does not reuse.

After the call, `poisoned_fraction(tensor)` reads the bytes the tensor spans and counts the
4-byte-aligned words (by address) equal to the pattern. The comparison is on bit patterns, not
values, so it does not depend on the output's dtype, and a written output (NaN-free or NaN with
torch's own payload) never matches. An output whose span is at least STALE_FRACTION poison was
never written: rejected, check `stale-output`. A smaller share is left to the comparison with the
reference (NaN where the reference is finite: incorrect).
"""

from typing import Iterable, List, Optional

import torch

POISON_WORD = 0x7FA5A5A5
POISON_BYTES = (0xA5, 0xA5, 0xA5, 0x7F)  # little-endian layout of POISON_WORD
STALE_FRACTION = 0.5
BLOCKS_PER_SIZE = 2
MAX_SIZES = 16
MAX_POISON_BYTES = 4 * 1024**3
CPU_MAX_POISON_BLOCK_BYTES = 32 * 1024**2
# Words of an output checked for the poison at once (256 MiB of it): bounds the check's temporaries.
CHECK_CHUNK_WORDS = 64 * 1024**2


def poison_sizes(values: Iterable, device: torch.device) -> List[int]:
    """Distinct byte sizes of the tensors among `values` (nested lists/tuples), largest first,
    at most MAX_SIZES; on cpu only those glibc serves from its heap."""
    sizes = set()

    def walk(value) -> None:
        if isinstance(value, torch.Tensor):
            nbytes = value.numel() * value.element_size()
            if nbytes >= 4:
                sizes.add(nbytes)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)

    walk(list(values))
    ordered = sorted(sizes, reverse=True)
    if device.type == "cpu":
        ordered = [size for size in ordered if size <= CPU_MAX_POISON_BLOCK_BYTES]
    return ordered[:MAX_SIZES]


def poison_allocator(sizes: Iterable[int], device: torch.device) -> None:
    """Allocates BLOCKS_PER_SIZE blocks of each size on `device`, fills them with the poison
    word and frees them (at most MAX_POISON_BYTES in all). Best effort: where memory runs out,
    the sizes poisoned so far are kept and the rest are skipped."""
    budget = MAX_POISON_BYTES
    blocks = []
    try:
        for size in sizes:
            words = max(1, (int(size) + 3) // 4)
            for _ in range(BLOCKS_PER_SIZE):
                if words * 4 > budget:
                    break
                budget -= words * 4
                block = torch.empty(words, dtype=torch.int32, device=device)
                block.fill_(POISON_WORD)
                blocks.append(block)
    except (RuntimeError, MemoryError):  # out of memory (torch.cuda.OutOfMemoryError is a RuntimeError)
        pass
    del blocks


def _span_elements(tensor: torch.Tensor) -> int:
    if tensor.numel() == 0:
        return 0
    return 1 + sum((size - 1) * abs(stride) for size, stride in zip(tensor.shape, tensor.stride()))


def poisoned_fraction(tensor: torch.Tensor) -> Optional[float]:
    """The share of 4-byte-aligned words in the bytes `tensor` spans that hold the poison word;
    None when the span holds no aligned word (fewer than 4 bytes, or not a dense strided tensor)."""
    if tensor.layout != torch.strided or tensor.device.type == "meta" or tensor.numel() == 0:
        return None
    if any(stride < 0 for stride in tensor.stride()):
        return None
    plain = tensor.detach()
    if type(plain) is not torch.Tensor:
        plain = plain.as_subclass(torch.Tensor)
    try:
        span = plain.as_strided([_span_elements(plain)], [1], plain.storage_offset())
        raw = span.contiguous().view(torch.uint8)
    except RuntimeError:  # a dtype without a byte view here (complex on old torch)
        return None
    start = (-plain.data_ptr()) % 4
    words = (raw.numel() - start) // 4
    if words <= 0:
        return None
    body = raw[start : start + 4 * words]
    try:  # the words as int32 (the blocks were filled as int32 words, in this byte order)
        as_words = body.view(torch.int32)
        count = _count_chunks(as_words, lambda chunk: chunk == POISON_WORD)
    except RuntimeError:  # a byte view whose offset does not allow an int32 view: compare byte groups
        pattern = torch.tensor(POISON_BYTES, dtype=torch.uint8, device=body.device)
        count = _count_chunks(body.reshape(words, 4), lambda chunk: (chunk == pattern).all(dim=1))
    return float(count) / words


def _count_chunks(rows: torch.Tensor, matching) -> int:
    """How many rows of `rows` `matching` marks, CHECK_CHUNK_WORDS rows at a time: the mask of a
    whole 6 GiB output is 1.5 GiB, and count_nonzero on cuda made an int64 copy of it (12 GiB, on
    the H100 on 2026-12-06), beside the candidate's inputs and output."""
    total = torch.zeros((), dtype=torch.int64, device=rows.device)
    for first in range(0, rows.shape[0], CHECK_CHUNK_WORDS):
        total += torch.count_nonzero(matching(rows[first : first + CHECK_CHUNK_WORDS]))
    return int(total.item())


def is_stale(tensor: torch.Tensor) -> Optional[float]:
    """The poisoned fraction when it reaches STALE_FRACTION, else None."""
    fraction = poisoned_fraction(tensor)
    return fraction if fraction is not None and fraction >= STALE_FRACTION else None
