"""The candidate's side of the output hand-over: each output leaves the candidate's reach at once.

Right after a call that produced an output the parent will judge (a correctness or generalisation
trial, a kept timed call, a batch's kept call) and its checks, before any more of the candidate's
code runs on this thread, the worker sends `handover` with the output's header
(output_wire.py) and waits. The parent hands the header to the judge (the reference worker, which
never runs candidate code), which checks it against the reference's own output and then takes
the bytes:

- on cuda, from a shareable allocation of this process (cuda_vmm.py): on `handover-send` with
  `transport: "descriptor"` the worker sends its descriptor over the hand-over socket
  (handover_socket.py), and the judge copies it device to device into memory of its own, so no
  byte crosses the host;
- otherwise (the cpu backend, or a descriptor the judge could not use), through the hand-over
  pipe, a FIFO the judge made in the scratch's read-only `in` folder: on `handover-send` the
  worker writes every tensor leaf's bytes into it, and the judge reads them into memory of its own.

The worker goes on only at `handover-done` (or ends at `stop`): by then the judge holds its copy,
so nothing the candidate does afterwards, in any thread, process or file, changes what is
compared or timed. There are no output files. docs/worker-protocol.md, "The output hand-over".
"""

import os
from typing import Any, List, Optional

import torch

from ..device.cuda_vmm import ExportedBlock
from . import outputs
from .handover_socket import sender
from .channel import Channel, ProtocolError, private_copy
from .errors import StageFailure
from .output_wire import OutputWireError, header_of, tensor_bytes, widen_pipe, write_tensor


class HandOverStopped(Exception):
    """The parent answered a hand-over with `stop` (or went away): the role ends without a message."""


def _flat(output: Any) -> outputs.FlatOutput:
    """The output's leaves, tensors detached and contiguous where they are (a copy only where a
    leaf is not contiguous); StageFailure when it cannot be described."""
    try:
        return outputs.flatten(output, keep_device=True, copy=False)
    except outputs.OutputStructureError as error:
        raise StageFailure(
            "runtime_error", "forward", f"the candidate's output cannot be handed over: {error}"
        ) from error


class Handover:
    """Hands outputs to the judge, one at a time, and waits until the judge holds its copy."""

    def __init__(self, channel: Channel, pipe_path: Optional[str], release=None):
        self.channel = channel
        self.pipe_path = pipe_path
        self.pipe_fd: Optional[int] = None
        #: Called before each hand-over while the candidate waits (the correctness trials give the
        #: allocator's cached blocks back, so that the judge, on the same device, has the room);
        #: None in the timing stage, whose calls must not meet a cold allocator.
        self.release = release

    def hand_over(self, output: Any, entry: dict) -> dict:
        """Hands `output` over with `entry`'s fields (`id`, seeds, digest, …); returns `entry`
        as the messages that list outputs carry it."""
        flat = _flat(output)
        try:
            header = header_of(flat)
        except OutputWireError as error:
            raise StageFailure(
                "runtime_error", "forward", f"the candidate's output cannot be handed over: {error}"
            ) from error
        tensors = [leaf for leaf in flat.leaves if isinstance(leaf, torch.Tensor)]
        if self.release is not None:
            self.release()  # before the staging block: the allocator's cache would leave it no room
        block, ipc = self._export(tensors)
        try:
            self.channel.send("handover", output={**entry, **header, "ipc": ipc})
            self._await_judge(entry["id"], tensors, block)
        finally:
            if block is not None:
                block.free()
        return entry

    def _export(self, tensors: List[torch.Tensor]):
        """(shared block, the `ipc` field) for cuda leaves; (None, None) elsewhere, (None, why not)
        where there is no socket or the driver refuses: the pipe then carries the bytes."""
        if not tensors or any(tensor.device.type != "cuda" for tensor in tensors):
            return None, None
        if not sender().available:
            return None, {"transport": None, "error": sender().broken}
        block, problem = ExportedBlock.of([tensor_bytes(tensor) for tensor in tensors], tensors[0].device)
        if block is None:
            return None, {"transport": None, "error": problem}
        return block, {"transport": "descriptor", "error": None}

    def _await_judge(self, output_id: str, tensors: List[torch.Tensor], block: Optional[ExportedBlock]) -> None:
        while True:
            reply = self.channel.receive()
            kind = None if reply is None else reply.get("type")
            if kind is None or kind == "stop":
                raise HandOverStopped()
            if kind == "handover-done":
                return
            if kind != "handover-send":
                raise ProtocolError(
                    f"expected 'handover-send', 'handover-done' or 'stop' after `handover`, got {kind!r}"
                )
            if reply.get("transport") == "descriptor":
                self._send_descriptor(output_id, block)
                continue
            fd = self._pipe()
            try:
                for tensor in tensors:
                    write_tensor(fd, tensor)
            except BrokenPipeError:
                pass  # the judge stopped reading (it says why in its judgement); wait for the parent

    @staticmethod
    def _send_descriptor(output_id: str, block: Optional[ExportedBlock]) -> None:
        """Sends the block's descriptor to the judge, who connected before it asked: a send that
        fails means other code in this process took or broke the connection, and the judge may
        already hold what that code sent (handover_socket.py)."""
        problem = "no allocation was exported for this output" if block is None else None
        problem = problem or sender().send(output_id, block.descriptor)
        if problem is not None:
            raise StageFailure("rejected", "handover", f"output {output_id} could not be handed over: {problem}")

    def _pipe(self) -> int:
        if self.pipe_fd is None:
            if not self.pipe_path:
                raise ProtocolError("the parent asked for the output's bytes, but the request named no `handover_pipe`")
            try:
                opened = os.open(self.pipe_path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError as error:
                raise ProtocolError(f"cannot open the hand-over pipe {self.pipe_path}: {error}") from error
            os.set_blocking(opened, True)
            widen_pipe(opened)
            self.pipe_fd = private_copy(opened)
            os.close(opened)
        return self.pipe_fd
