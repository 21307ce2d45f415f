"""The file a candidate's output travels in, from the candidate role to the reference role.

Layout: the magic line `KFORGE-OUTPUT 2\\n`, an 8-byte little-endian header length, a JSON header
({skeleton, leaf_info, leaves}), then each tensor leaf's raw bytes in leaf order. A tensor leaf's
header entry is {"tensor": {"dtype", "shape", "offset", "nbytes"}} (offset from the start of the
data); any other leaf is {"value": v} with floats as `float.hex()` strings (NaN and ±Inf survive).

No pickle is involved: the file is written by the candidate's process and is untrusted, so the
reader takes nothing from it but a bounded JSON header and bytes, checks every size against the
file and the dtype table, and builds fresh tensors. On cuda the bytes move through pinned host
buffers in chunks (STAGING_BYTES): device -> pinned -> file, and file -> pinned -> device, so a
1 GiB output costs a page-cache write and read instead of a pageable copy plus serialisation.

A tensor of several chunks is read on up to IO_THREADS threads at once, each with its own chunks
(every IO_THREADS-th) and its own pinned buffer, by positioned reads (`preadv`, which releases the
GIL, as torch's copies do). On the H200 a 6 GiB output took 2.0–2.2 s to judge, 70% of it reading
its file back through one buffer (docs/benchmarks/kernelbench-sizes-h200.md): one thread copies
from the page cache at a few GB/s, and the host has cores to spare. Writes stay on one thread:
writes to one file take its inode's lock in turn, so more threads gain nothing
(docs/benchmarks/output-io.md).
"""

import json
import math
import os
import struct
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

MAGIC = b"KFORGE-OUTPUT 2\n"
HEADER_LIMIT_BYTES = 16 * 1024 * 1024
STAGING_BYTES = 64 * 1024 * 1024
#: Threads that read one tensor's chunks at once (each with a pinned buffer of STAGING_BYTES on cuda).
IO_THREADS = max(1, min(4, os.cpu_count() or 1))
DTYPES: Dict[str, torch.dtype] = {
    str(dtype).replace("torch.", ""): dtype
    for dtype in (
        torch.float64,
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.complex64,
        torch.complex128,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bool,
    )
}
_staging: Dict[str, torch.Tensor] = {}


class OutputFileFormatError(Exception):
    """The file is not an output file of this format, or its header does not fit its contents."""


def _staging_buffers(count: int) -> List[torch.Tensor]:
    """`count` pinned host buffers of STAGING_BYTES, kept for the process (made on first use on a
    cuda device)."""
    buffers = _staging.setdefault("pinned", [])
    while len(buffers) < count:
        buffers.append(torch.empty(STAGING_BYTES, dtype=torch.uint8, pin_memory=True))
    return buffers[:count]


def _bytes_of(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor's bytes as a flat uint8 view (the tensor must be contiguous)."""
    flat = tensor.reshape(-1)
    return flat.view(torch.uint8) if flat.dtype != torch.uint8 else flat


def _pread_exact(fd: int, target: memoryview, offset: int) -> None:
    done = 0
    while done < len(target):
        count = os.preadv(fd, [target[done:]], offset + done)
        if count <= 0:
            raise OutputFileFormatError("it ends inside a tensor")
        done += count


def _pwrite_all(fd: int, source: memoryview, offset: int) -> None:
    done = 0
    while done < len(source):
        done += os.pwritev(fd, [source[done:]], offset + done)


def in_chunks(nbytes: int, move: Callable[[int, int, int], None], threads: int = IO_THREADS) -> None:
    """Calls `move(worker, start, count)` for every chunk of STAGING_BYTES of `nbytes` bytes, on up to
    `threads` threads: worker k moves chunks k, k + threads, … in order (so a buffer of its own is
    reused chunk after chunk). The first error is raised once every thread has stopped."""
    starts = list(range(0, nbytes, STAGING_BYTES))
    workers = max(1, min(threads, len(starts)))

    def run(worker: int) -> None:
        for start in starts[worker::workers]:
            move(worker, start, min(STAGING_BYTES, nbytes - start))

    if workers == 1:
        run(0)
        return
    with ThreadPoolExecutor(workers, thread_name_prefix="kforge-output-io") as pool:
        for done in [pool.submit(run, worker) for worker in range(workers)]:
            done.result()


def _write_tensor(fd: int, tensor: torch.Tensor, offset: int) -> None:
    data = _bytes_of(tensor)
    if data.device.type == "cpu":
        _pwrite_all(fd, memoryview(data.numpy()), offset)
        return
    staging = _staging_buffers(1)[0]
    for start in range(0, data.numel(), STAGING_BYTES):
        count = min(STAGING_BYTES, data.numel() - start)
        staging[:count].copy_(data[start : start + count])
        _pwrite_all(fd, memoryview(staging[:count].numpy()), offset + start)


def _tensor_entry(tensor: torch.Tensor, offset: int) -> dict:
    dtype = str(tensor.dtype).replace("torch.", "")
    if dtype not in DTYPES:
        raise OutputFileFormatError(f"an output of dtype {dtype} cannot be saved")
    if tensor.layout != torch.strided:
        raise OutputFileFormatError(f"an output with layout {tensor.layout} cannot be saved; return a dense tensor")
    return {
        "tensor": {
            "dtype": dtype,
            "shape": list(tensor.shape),
            "offset": offset,
            "nbytes": tensor.numel() * tensor.element_size(),
        }
    }


def write(path: str, skeleton: str, leaves: List[Any], leaf_info: List[dict]) -> None:
    """Writes the file; tensor leaves may be on the cpu or a cuda device (made contiguous here)."""
    entries, tensors, offset = [], [], 0
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor):
            tensor = leaf.detach().contiguous()
            entry = _tensor_entry(tensor, offset)
            offset += entry["tensor"]["nbytes"]
            tensors.append(tensor)
            entries.append(entry)
        else:
            entries.append({"value": leaf.hex() if type(leaf) is float else leaf})
    header = json.dumps({"skeleton": skeleton, "leaf_info": leaf_info, "leaves": entries}).encode()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "wb") as handle:
        head = MAGIC + struct.pack("<Q", len(header)) + header
        handle.write(head)
        handle.flush()
        position = len(head)
        for tensor in tensors:
            _write_tensor(handle.fileno(), tensor, position)
            position += tensor.numel() * tensor.element_size()


def _read_header(handle, size: int) -> Tuple[dict, int]:
    if handle.read(len(MAGIC)) != MAGIC:
        raise OutputFileFormatError("it is not a kforge output file")
    packed = handle.read(8)
    if len(packed) != 8:
        raise OutputFileFormatError("it ends inside its header")
    length = struct.unpack("<Q", packed)[0]
    data_start = len(MAGIC) + 8 + length
    if length > HEADER_LIMIT_BYTES or data_start > size:
        raise OutputFileFormatError(f"its header length {length} does not fit the file")
    try:
        header = json.loads(handle.read(length))
    except (ValueError, UnicodeDecodeError) as error:
        raise OutputFileFormatError(f"its header is not JSON: {error}") from error
    if not isinstance(header, dict):
        raise OutputFileFormatError("its header is not a JSON object")
    return header, data_start


def _tensor_spec(entry: Any, data_size: int, expected_offset: int) -> Tuple[torch.dtype, List[int], int]:
    spec = entry.get("tensor") if isinstance(entry, dict) else None
    if not isinstance(spec, dict) or spec.get("dtype") not in DTYPES:
        raise OutputFileFormatError(f"a tensor entry is malformed: {str(entry)[:200]}")
    dtype, shape = DTYPES[spec["dtype"]], spec.get("shape")
    if not (isinstance(shape, list) and all(type(size) is int and size >= 0 for size in shape)):
        raise OutputFileFormatError(f"a tensor's shape is malformed: {str(shape)[:200]}")
    nbytes = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
    if spec.get("nbytes") != nbytes or spec.get("offset") != expected_offset or expected_offset + nbytes > data_size:
        raise OutputFileFormatError("a tensor's size or offset does not match its shape or the file")
    return dtype, shape, nbytes


def _read_tensor(fd: int, dtype: torch.dtype, shape: List[int], nbytes: int, device: torch.device, offset: int):
    tensor = torch.empty(shape, dtype=dtype, device=device)
    data = _bytes_of(tensor)
    if device.type == "cpu":
        in_chunks(
            nbytes,
            lambda _, start, count: _pread_exact(fd, memoryview(data[start : start + count].numpy()), offset + start),
        )
        return tensor
    buffers = _staging_buffers(min(IO_THREADS, -(-nbytes // STAGING_BYTES)))

    def move(worker: int, start: int, count: int) -> None:
        staging = buffers[worker]
        _pread_exact(fd, memoryview(staging[:count].numpy()), offset + start)
        data[start : start + count].copy_(staging[:count])

    in_chunks(nbytes, move, len(buffers))
    return tensor


def read(path: str, device: Optional[torch.device] = None) -> Tuple[str, List[Any], List[Any]]:
    """(skeleton, leaves, leaf_info) from the file; tensor leaves on `device` (default cpu).
    Raises OutputFileFormatError for anything but a well-formed file; OSError as is."""
    device = device or torch.device("cpu")
    size = os.path.getsize(path)
    with open(path, "rb") as handle:
        header, data_start = _read_header(handle, size)
        skeleton, infos, entries = header.get("skeleton"), header.get("leaf_info"), header.get("leaves")
        if not (
            isinstance(skeleton, str)
            and isinstance(infos, list)
            and isinstance(entries, list)
            and len(infos) == len(entries)
        ):
            raise OutputFileFormatError("its header lacks the skeleton, the leaves or their descriptions")
        leaves, offset = [], 0
        for entry in entries:
            if isinstance(entry, dict) and "value" in entry:
                leaves.append(entry["value"])
                continue
            dtype, shape, nbytes = _tensor_spec(entry, size - data_start, offset)
            leaves.append(_read_tensor(handle.fileno(), dtype, shape, nbytes, device, data_start + offset))
            offset += nbytes
    return skeleton, leaves, infos
