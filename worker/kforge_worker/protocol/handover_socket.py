"""The hand-over socket: how a shared allocation's descriptor goes from the candidate to the judge.

The sandbox launcher, before it makes the candidate's namespaces, binds a listening Unix
stream socket at the path the parent names (`--handover-socket`, in the scratch's `in`
folder, which the candidate sees read-only) and leaves its descriptor to the worker
(`KFORGE_HANDOVER_LISTENER`). The candidate's code cannot make or connect a Unix socket of its own
(seccomp); only the judge ever connects to this one.

One connection per output. When the judge wants an output's bytes by descriptor it connects,
asks through the parent (`handover-ready` with `transport: "descriptor"`, relayed as
`handover-send`), and reads (`DescriptorReceiver.receive`) until the connection ends: exactly the
output's id and one descriptor must have come. The worker accepts, sends, and closes
(`DescriptorSender.send`).

The candidate's code shares the worker's process, so it can find the listener, or the accepted
connection, among its descriptors. Whatever it does with them shows. If it accepts the judge's
connection first, the worker's own accept finds none (the judge connected before it asked), and
the worker ends the stage `rejected`, check `handover`. If it sends on the worker's connection,
keeps it open, or ends it early, the judge does not get exactly one id and one descriptor and an
end: it takes that output by pipe from the worker instead (and every later one), and a worker
whose send then fails ends the stage the same way. Nothing the candidate sends here is followed,
only validated by the driver (cuda_vmm.copy_from_descriptor), and no error text carries what it
sent.
"""

import array
import os
import socket
import stat
from typing import List, Optional, Tuple

from kforge_sandbox.listener import LISTENER_VARIABLE, unix_address

#: How long each side waits for the other (connect, accept, the message, the end).
PATIENCE_S = 10.0
MAX_MESSAGE_BYTES = 256
DESCRIPTOR_BYTES = array.array("i").itemsize
#: Descriptors the judge makes room for in one read: one more than the worker sends, so that a
#: second one shows instead of being dropped by the kernel.
ROOM_FOR_DESCRIPTORS = 2


class DescriptorSender:
    """The candidate worker's end: accepts the judge's connection for each output and sends on it."""

    def __init__(self, listener: Optional[socket.socket]):
        self.listener = listener
        self.unavailable: Optional[str] = (
            None if listener is not None else "no hand-over socket was made for this worker"
        )

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
        return self.unavailable is None

    def send(self, output_id: str, descriptor: int) -> Optional[str]:
        """Accepts the judge's connection, sends `output_id` with `descriptor` and closes it; None
        when sent, else why not. The judge connected before it asked, so an accept that finds no
        connection means other code in this process took it."""
        if self.listener is None:
            return self.unavailable
        try:
            self.listener.settimeout(PATIENCE_S)
            connection, _ = self.listener.accept()
        except OSError as error:
            return f"the judge's connection was not there to accept ({type(error).__name__}): other code took it"
        try:
            with connection:
                connection.settimeout(PATIENCE_S)
                socket.send_fds(connection, [output_id.encode()[:MAX_MESSAGE_BYTES]], [descriptor])
                connection.shutdown(socket.SHUT_WR)
        except OSError as error:
            return f"the descriptor could not be sent to the judge ({type(error).__name__})"
        return None

    def close(self) -> None:
        if self.listener is not None:
            self.listener.close()
            self.listener = None


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
    """The judge's end: one connection per output to the socket the launcher made."""

    def __init__(self, path: Optional[str]):
        self.path = path
        self.connection: Optional[socket.socket] = None
        self.broken: Optional[str] = None if path else "the request named no hand-over socket"

    @property
    def available(self) -> bool:
        return self.broken is None

    def connect(self) -> Optional[str]:
        """Connects for the next output; None when connected, else why not (the socket is then
        not used again)."""
        if self.broken is not None:
            return self.broken
        self.close()
        try:
            if not stat.S_ISSOCK(os.lstat(self.path).st_mode):
                return self.stop("the hand-over socket is not a socket")
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            connection.settimeout(PATIENCE_S)
            with unix_address(self.path) as address:
                connection.connect(address)
        except OSError as error:
            return self.stop(f"the hand-over socket could not be reached ({type(error).__name__})")
        self.connection = connection
        return None

    def receive(self, output_id: str) -> Tuple[Optional[int], Optional[str]]:
        """(the descriptor sent for `output_id`, None) once the connection `connect` made has ended
        with exactly that id and one descriptor on it; else (None, why not), the socket then not
        used again."""
        if self.connection is None:
            return None, self.broken or "the judge asked for a descriptor without a connection"
        data, descriptors = b"", []
        try:
            while True:  # not socket.recv_fds: it drops its flags, and the descriptors would be inheritable
                chunk, ancillary, flags, _ = self.connection.recvmsg(
                    MAX_MESSAGE_BYTES,
                    socket.CMSG_SPACE(ROOM_FOR_DESCRIPTORS * DESCRIPTOR_BYTES),
                    socket.MSG_CMSG_CLOEXEC,
                )
                descriptors += _descriptors(ancillary)
                if flags & socket.MSG_CTRUNC or len(descriptors) > 1 or len(data) + len(chunk) > MAX_MESSAGE_BYTES:
                    raise _Unexpected()
                if not chunk:
                    break
                data += chunk
        except (OSError, _Unexpected) as error:
            _close_all(descriptors)
            what = "more than the worker sends" if isinstance(error, _Unexpected) else type(error).__name__
            return None, self.stop(f"the hand-over connection did not end as sent ({what})")
        self.close()
        if len(descriptors) != 1 or data != output_id.encode():
            _close_all(descriptors)
            return None, self.stop("the hand-over connection did not carry this output's id and one descriptor")
        return descriptors[0], None

    def stop(self, why: str) -> str:
        """Uses the socket no more (every later output comes by pipe); returns `why`."""
        self.broken = why
        self.close()
        return why

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


class _Unexpected(Exception):
    """More came on a hand-over connection than the worker sends."""


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
