"""The judge's side of the output hand-over (handover.py is the candidate's).

The reference worker makes the hand-over pipe, a FIFO, when its request names one, and keeps its
read end. For each output it is asked to judge it first checks the candidate's header against the
reference's own output for that trial (or, before that reference is computed, the structure of
one already computed at the same problem sizes): the same skeleton, a plain tensor where the
reference has one, the same shape and dtype. Nothing is allocated and no byte
is read before that check passes; an output that fails it is the candidate's `incorrect` (check
`structure`, `shape` or `dtype`), with a message that depends only on the header and the reference. Then
it allocates fresh tensors of the sizes it computed itself and takes the bytes: on cuda by
descriptor of a shared allocation (`handover-ready` with `transport: "descriptor"`; the candidate
sends it over the hand-over socket, handover_socket.py, and cuda_vmm.py copies it device to
device), else, or when that fails, through the pipe after writing `handover-ready` (the parent
then lets the candidate write). It writes `handover-received` once the copy is its own, then
judges it.

A pipe that stalls, ends inside an output, or holds bytes nobody asked for is the candidate's
doing (check `handover`); the pipe is then out of step and every later output is refused too.
"""

import os
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Union

import torch

from ..device.cuda_vmm import copy_from_descriptor
from .handover_socket import DescriptorReceiver
from .outputs import MAX_LEAVES, FlatOutput, leaf_name
from .output_wire import DTYPES, PipeStalled, pending_bytes, read_tensor, tensor_bytes, value_leaf, widen_pipe

#: How long the judge waits for the next byte of an output on the pipe (a candidate that died in
#: the middle of a hand-over costs this much before its verdict).
PIPE_PATIENCE_S = 30.0
MAX_DIMENSIONS = 64
SIMPLE_VALUES = (bool, int, float, str, type(None))


@dataclass(frozen=True)
class Refusal:
    """An output the judge did not take, and why: a trial's `check` and `message`."""

    check: str
    message: str


def structure_of(flat: FlatOutput) -> FlatOutput:
    """`flat`'s structure without its data: tensor leaves become meta tensors of the same shape and dtype."""
    leaves = [
        torch.empty(tuple(leaf.shape), dtype=leaf.dtype, device="meta") if isinstance(leaf, torch.Tensor) else leaf
        for leaf in flat.leaves
    ]
    return FlatOutput(skeleton=flat.skeleton, leaves=leaves, leaf_info=[dict(info) for info in flat.leaf_info])


def _header_lists(header: Optional[dict]) -> Union[Refusal, tuple]:
    header = header or {}
    skeleton, infos, entries = header.get("skeleton"), header.get("leaf_info"), header.get("leaves")
    if not (isinstance(skeleton, str) and isinstance(infos, list) and isinstance(entries, list)):
        return Refusal("structure", "the candidate's hand-over did not describe its output (skeleton, leaves)")
    if len(infos) != len(entries) or len(entries) > MAX_LEAVES or len(skeleton) > 64 * MAX_LEAVES:
        return Refusal("structure", "the candidate's hand-over described its output inconsistently")
    if not all(isinstance(info, dict) and isinstance(info.get("type"), str) for info in infos):
        return Refusal("structure", "the candidate's hand-over gave a leaf without a type")
    return skeleton, infos, entries


def _tensor_spec(entry: Any, name: str, expected: torch.Tensor) -> Union[Refusal, tuple]:
    spec = entry.get("tensor") if isinstance(entry, dict) else None
    shape = spec.get("shape") if isinstance(spec, dict) else None
    if not (
        isinstance(shape, list)
        and len(shape) <= MAX_DIMENSIONS
        and all(type(size) is int and size >= 0 for size in shape)
    ):
        return Refusal("structure", f"{name} was handed over without a valid shape")
    if tuple(shape) != tuple(expected.shape):
        return Refusal("shape", f"{name} has shape {tuple(shape)}, the reference's is {tuple(expected.shape)}")
    dtype = DTYPES.get(spec.get("dtype")) if isinstance(spec.get("dtype"), str) else None
    if dtype != expected.dtype:
        # Refused before any byte: a wider dtype than the reference's would make the judge allocate
        # up to 16 bytes an element, where a GPU-sized reference leaves no room for it.
        return Refusal("dtype", f"{name} has dtype {str(spec.get('dtype'))[:40]}, the reference's is {expected.dtype}")
    return dtype, tuple(shape)


def check_header(header: Optional[dict], expected: FlatOutput) -> Union[Refusal, List[Any]]:
    """Per leaf, (dtype, shape) for a tensor or the value itself; or why the output is refused.
    Only the header and `expected` are read: no allocation, no byte of the output."""
    lists = _header_lists(header)
    if isinstance(lists, Refusal):
        return lists
    skeleton, infos, entries = lists
    if skeleton != expected.skeleton or len(entries) != len(expected.leaves):
        return Refusal(
            "structure", f"the output's structure is {skeleton[:200]}, the reference's is {expected.skeleton}"
        )
    count, specs = len(entries), []
    for index, (info, entry, reference) in enumerate(zip(infos, entries, expected.leaves)):
        name = leaf_name(index, count)
        if info["type"].startswith("tensor-subclass:"):
            kind = info["type"].split(":", 1)[1][:80]
            return Refusal("structure", f"{name} is a {kind} (a torch.Tensor subclass), not a plain torch.Tensor")
        if isinstance(reference, torch.Tensor) != (info["type"] == "tensor"):
            return Refusal(
                "structure",
                f"{name} is a {info['type'][:80]}, the reference's is a {expected.leaf_info[index]['type']}",
            )
        if isinstance(reference, torch.Tensor):
            spec = _tensor_spec(entry, name, reference)
            if isinstance(spec, Refusal):
                return spec
            specs.append(spec)
        else:
            value = value_leaf(entry, info) if isinstance(entry, dict) else None
            if not isinstance(value, SIMPLE_VALUES) or (isinstance(value, str) and len(value) > 1000):
                return Refusal("structure", f"{name} was handed over without a readable value")
            specs.append(value)
    return specs


class HandoverReceiver:
    """Takes the candidate's outputs for the judge (one reference worker, one evaluation)."""

    def __init__(
        self,
        pipe_path: Optional[str],
        send: Callable[..., None],
        device: torch.device,
        socket_path: Optional[str] = None,
    ):
        self.send, self.device = send, device
        self.descriptors = DescriptorReceiver(socket_path)
        self.pipe_fd: Optional[int] = None
        self.broken: Optional[str] = None
        #: The structure of a computed reference per problem variant (None: the preset's sizes).
        self.structures: dict = {}
        if pipe_path is not None:
            self.pipe_fd = make_pipe(pipe_path)

    def remember(self, variant: Optional[dict], reference: FlatOutput) -> None:
        key = _variant_key(variant)
        if key not in self.structures:
            self.structures[key] = structure_of(reference)

    def structure(self, variant: Optional[dict]) -> Optional[FlatOutput]:
        return self.structures.get(_variant_key(variant))

    def receive(self, entry, expected: FlatOutput) -> Union[Refusal, FlatOutput]:
        """The candidate's output, now the judge's own, or why it was not taken."""
        specs = check_header(entry.header, expected)
        if isinstance(specs, Refusal):
            return specs
        if self.broken is not None:
            return Refusal("handover", f"the output could not be taken: {self.broken}")
        started = time.perf_counter()
        targets = [torch.empty(spec[1], dtype=spec[0], device=self.device) for spec in specs if isinstance(spec, tuple)]
        transport, ipc_error = self._take(entry, targets)
        if isinstance(transport, Refusal):
            self.broken = transport.message
            return transport
        received_ms = (time.perf_counter() - started) * 1000.0
        nbytes = sum(target.numel() * target.element_size() for target in targets)
        self.send(
            "handover-received",
            id=entry.id,
            transport=transport,
            bytes=nbytes,
            receive_ms=received_ms,
            ipc_error=ipc_error,
        )
        tensors = iter(targets)
        leaves = [next(tensors) if isinstance(spec, tuple) else spec for spec in specs]
        return FlatOutput(skeleton=entry.header["skeleton"], leaves=leaves, leaf_info=list(entry.header["leaf_info"]))

    def _take(self, entry, targets: List[torch.Tensor]):
        """('cuda-ipc' or 'pipe', why the device-to-device copy was not used or None), or a Refusal."""
        ipc = entry.header.get("ipc") if isinstance(entry.header, dict) else None
        ipc_error = None
        if targets and self.device.type == "cuda" and isinstance(ipc, dict) and ipc.get("transport") == "descriptor":
            ipc_error = self._by_descriptor(entry.id, targets)
            if ipc_error is None:
                return "cuda-ipc", None
        elif isinstance(ipc, dict) and isinstance(ipc.get("error"), str):
            ipc_error = ipc["error"][:300]
        if not targets:
            return "none", ipc_error
        if self.pipe_fd is None:
            return Refusal("handover", "the output's bytes have no way to the judge (no hand-over pipe)"), None
        if pending_bytes(self.pipe_fd):
            return Refusal("handover", "bytes were waiting in the hand-over pipe before the judge asked for any"), None
        self.send("handover-ready", id=entry.id)
        try:
            for target in targets:
                read_tensor(self.pipe_fd, target, PIPE_PATIENCE_S)
        except PipeStalled as stalled:
            return Refusal("handover", f"the output's hand-over broke off: {stalled}"), None
        if pending_bytes(self.pipe_fd):
            return Refusal("handover", "more bytes than the output holds were written into the hand-over pipe"), None
        return "pipe", ipc_error

    def _by_descriptor(self, output_id: str, targets: List[torch.Tensor]) -> Optional[str]:
        """Asks for the output's shared allocation and copies it into `targets`; None when done, else
        why not (the socket is then not used again: every later output comes by pipe)."""
        problem = self.descriptors.connect()
        if problem is not None:
            return problem
        self.send("handover-ready", id=output_id, transport="descriptor")
        descriptor, problem = self.descriptors.receive(output_id)
        if descriptor is None:
            return problem
        try:
            problem = copy_from_descriptor(descriptor, [tensor_bytes(target) for target in targets])
        finally:
            os.close(descriptor)
        if problem is not None:
            self.descriptors.stop(problem)
        return problem


def _variant_key(variant: Optional[dict]) -> tuple:
    return tuple(sorted((variant or {}).items()))


#: Write ends this process holds on its own pipes (never written): a FIFO whose writers have all
#: closed reads as ended, so a writer that closes between two outputs (or one that has not opened
#: it yet) would look like a hand-over that broke off. With one held here the pipe never ends, and
#: a stall is told by PIPE_PATIENCE_S alone.
_HELD_WRITERS: List[int] = []


def make_pipe(path: str) -> int:
    """Makes the FIFO at `path` (writable by the candidate's own uid: mode 0622) and opens its read
    end without waiting for a writer; returns the descriptor (close-on-exec, blocking reads)."""
    if os.path.lexists(path):
        os.unlink(path)
    os.mkfifo(path, 0o600)
    os.chmod(path, 0o622)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    _HELD_WRITERS.append(os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC))
    os.set_blocking(fd, True)
    widen_pipe(fd)
    return fd


def close_pipe(fd: int) -> None:
    """Closes a pipe `make_pipe` opened, and the write end held on it."""
    os.close(fd)
    while _HELD_WRITERS:
        os.close(_HELD_WRITERS.pop())
