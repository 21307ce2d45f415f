"""device_digest.py: the word digest against a plain-Python rendering of its definition."""

import pytest
import torch

from kforge_worker.device import device_digest
from kforge_worker.guard.input_digest import input_digest

MASK = (1 << 64) - 1


def python_digest(data: bytes) -> str:
    """The definition in the module docs, in Python integers."""
    whole = len(data) // 4 * 4
    sums = [0, 0]
    for index in range(whole // 4):
        word = int.from_bytes(data[4 * index : 4 * index + 4], "little")
        for position, key in enumerate(device_digest.KEYS):
            value = ((index << 32) | word) ^ key
            value ^= value >> 30
            value = (value * device_digest.MULTIPLIERS[0]) & MASK
            value ^= value >> 27
            value = (value * device_digest.MULTIPLIERS[1]) & MASK
            value ^= value >> 31
            sums[position] = (sums[position] + value) & MASK
    return f"{sums[0]:016x}-{sums[1]:016x}-{data[whole:].hex()}"


@pytest.mark.parametrize(
    "tensor",
    [
        torch.randn(37),
        torch.arange(-20, 20, dtype=torch.int64),
        torch.randn(3, 5).to(torch.float16)[:, 1:],
        torch.tensor([True, False, True]),
        torch.empty(0),
    ],
)
def test_matches_the_definition(tensor):
    contiguous = tensor.contiguous()
    data = bytes(contiguous.reshape(-1).view(torch.uint8).tolist()) if contiguous.numel() else b""
    assert device_digest.word_digest(tensor) == python_digest(data)


def test_every_change_and_every_swap_shows(monkeypatch):
    values = torch.randn(1000)
    original = device_digest.word_digest(values)
    changed = values.clone()
    changed[517] = torch.nextafter(changed[517], torch.tensor(float("inf")))
    swapped = values.clone()
    swapped[[3, 900]] = values[[900, 3]]
    assert len({original, device_digest.word_digest(changed), device_digest.word_digest(swapped)}) == 3


def test_the_chunking_does_not_change_the_digest(monkeypatch):
    values = torch.randn(4099)
    whole = device_digest.word_digest(values)
    monkeypatch.setattr(device_digest, "CHUNK_WORDS", 1000)
    assert device_digest.word_digest(values) == whole


def test_input_digest_tells_dtype_shape_and_contents_apart():
    values = torch.randn(4, 6)
    digests = {
        input_digest([values]),
        input_digest([values.reshape(6, 4)]),
        input_digest([values.double()]),
        input_digest([values + 1]),
        input_digest([values, 3]),
        input_digest([values, 4]),
    }
    assert len(digests) == 6
    assert input_digest([values.clone()]) == input_digest([values])
