"""Seeds the worker derives from the parent's seeds, the same way in both roles.

`derived_seed(seed, index)` is a fixed mix of a parent seed and a small index (a 32-bit
multiply-xorshift), so that further input sets (timed-call contents, generalisation trials) need
no new request fields and the two roles always agree. The exact formula is part of the protocol
(docs/worker-protocol.md) so that a parent can reproduce it.
"""

MASK_32 = 0xFFFFFFFF


def derived_seed(seed: int, index: int) -> int:
    """`h = (seed * 0x9E3779B1 + index * 0x85EBCA77) mod 2^32; h ^= h >> 16; h = h * 0x7FEB352D mod 2^32;
    h ^= h >> 15` — deterministic, in [0, 2^32)."""
    value = (seed * 0x9E3779B1 + index * 0x85EBCA77) & MASK_32
    value ^= value >> 16
    value = (value * 0x7FEB352D) & MASK_32
    value ^= value >> 15
    return value
