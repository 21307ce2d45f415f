"""The hand-over socket: how a shared allocation's descriptor goes from the candidate to the judge.

The sandbox launcher, before it makes the candidate's namespaces, binds a listening Unix
`SOCK_SEQPACKET` socket at the path the parent names (`--handover-socket`, in the scratch's `in`
folder, which the candidate sees read-only) and leaves its descriptor to the worker
(`KFORGE_HANDOVER_LISTENER`). The candidate's code cannot make or connect a Unix socket of its own
(seccomp); this one only ever answers the judge.

When the judge wants an output's bytes by descriptor it connects (once per evaluation), asks
through the parent (`handover-ready` with `transport: "descriptor"`, relayed as `handover-send`),
and reads one message: the output's id and one descriptor (`DescriptorReceiver.receive`). The
worker accepts that one connection at the first request, closes the listener, and sends
(`DescriptorSender.send`). A message with another id, no descriptor or more than one, or nothing
within PATIENCE_S marks the socket broken for the rest of the evaluation: every later output
comes by pipe. Nothing the candidate sends here is followed, only validated by the driver
(cuda_vmm.copy_from_descriptor), and no error text carries what it sent.
"""

import array
import os
import socket
import stat
from typing import List, Optional, Tuple

from kforge_sandbox.listener import LISTENER_VARIABLE, unix_address

#: How long each side waits for the other (connect, accept, the message).
PATIENCE_S = 10.0
MAX_MESSAGE_BYTES = 256
DESCRIPTOR_BYTES = array.array("i").itemsize


class DescriptorSender:
    """The candidate worker's end: accepts the judge's one connection and sends descriptors on it."""

    def __init__(self, listener: Optional[socket.socket]):
        self.listener = listener
        self.connection: Optional[socket.socket] = None
        self.broken: Optional[str] = None if listener is not None else "no hand-over socket was made for this worker"

    @classmethod
    def from_environment(cls) -> "DescriptorSender":
        """The sender over the launcher's listener, the variable removed; one without a listener
        when there is none."""
        value = os.environ.pop(LISTENER_VARIABLE, None)
        if value is None or not value.isdigit():
            return cls(None)
        try:
            listener = socket.socket(fileno=int(value))
        except OSError:
            return cls(None)
        os.set_inheritable(listener.fileno(), False)
        return cls(listener)

    @property
    def available(self) -> bool:
        return self.broken is None

    def send(self, output_id: str, descriptor: int) -> Optional[str]:
        """Sends `output_id` with `descriptor` to the judge; None when sent, else why not (the
        socket is then broken for good)."""
        if self.broken is not None:
            return self.broken
        try:
            if self.connection is None:
                self.listener.settimeout(PATIENCE_S)
                connection, _ = self.listener.accept()
                self._close_listener()
                connection.settimeout(PATIENCE_S)
                self.connection = connection
            socket.send_fds(self.connection, [output_id.encode()[:MAX_MESSAGE_BYTES]], [descriptor])
        except OSError as error:
            self.broken = f"the descriptor could not be sent ({type(error).__name__})"
            self.close()
            return self.broken
        return None

    def _close_listener(self) -> None:
        if self.listener is not None:
            self.listener.close()
            self.listener = None

    def close(self) -> None:
        self._close_listener()
        if self.connection is not None:
            self.connection.close()
            self.connection = None


_SENDER: List[DescriptorSender] = []


def take_listener() -> None:
    """Takes the launcher's listener for this worker (the variable is removed), before any problem
    or candidate code runs; `sender()` answers with it from then on."""
    _SENDER[:] = [DescriptorSender.from_environment()]


def sender() -> DescriptorSender:
    """This worker's sender (one without a listener where `take_listener` found none)."""
    if not _SENDER:
        _SENDER.append(DescriptorSender(None))
    return _SENDER[0]


class DescriptorReceiver:
    """The judge's end: connects to the socket the launcher made and receives one descriptor per output."""

    def __init__(self, path: Optional[str]):
        self.path = path
        self.connection: Optional[socket.socket] = None
        self.broken: Optional[str] = None if path else "the request named no hand-over socket"

    @property
    def available(self) -> bool:
        return self.broken is None

    def connect(self) -> Optional[str]:
        """Connects when not yet connected; None when connected, else why not (then broken)."""
        if self.broken is not None or self.connection is not None:
            return self.broken
        try:
            if not stat.S_ISSOCK(os.lstat(self.path).st_mode):
                return self._break("the hand-over socket is not a socket")
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            connection.settimeout(PATIENCE_S)
            with unix_address(self.path) as address:
                connection.connect(address)
        except OSError as error:
            return self._break(f"the hand-over socket could not be reached ({type(error).__name__})")
        self.connection = connection
        return None

    def receive(self, output_id: str) -> Tuple[Optional[int], Optional[str]]:
        """(the descriptor sent for `output_id`, None), or (None, why not) with the socket broken."""
        problem = self.connect()
        if problem is not None:
            return None, problem
        try:
            # Not socket.recv_fds: it drops its `flags`, and the descriptor would be inheritable.
            message, ancillary, flags, _ = self.connection.recvmsg(
                MAX_MESSAGE_BYTES, socket.CMSG_SPACE(DESCRIPTOR_BYTES), socket.MSG_CMSG_CLOEXEC
            )
        except OSError as error:
            return None, self._break(f"no descriptor came ({type(error).__name__})")
        descriptors = _descriptors(ancillary)
        if flags & (socket.MSG_CTRUNC | socket.MSG_TRUNC) or len(descriptors) != 1:
            _close_all(descriptors)
            return None, self._break("a hand-over message carried no descriptor, or more than one")
        if message != output_id.encode():
            _close_all(descriptors)
            return None, self._break("a descriptor came for another output")
        return descriptors[0], None

    def stop(self, why: str) -> None:
        """Uses the socket no more (a descriptor came but could not be copied from)."""
        self._break(why)

    def _break(self, why: str) -> str:
        self.broken = why
        self.close()
        return why

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def _descriptors(ancillary) -> List[int]:
    """The descriptors of SCM_RIGHTS entries in `recvmsg`'s ancillary data."""
    found = array.array("i")
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            found.frombytes(data[: len(data) - len(data) % DESCRIPTOR_BYTES])
    return list(found)


def _close_all(descriptors: List[int]) -> None:
    for descriptor in descriptors:
        try:
            os.close(descriptor)
        except OSError:
            pass
