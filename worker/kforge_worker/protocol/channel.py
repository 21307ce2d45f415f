"""The worker's two protocol channels: JSON lines out on fd 3, JSON lines in on stdin.

Both file descriptors are moved to private, close-on-exec descriptors at start-up, before any
problem or candidate code runs: fd 3 is closed (a candidate cannot write protocol lines to it by
number) and fd 0 is pointed at /dev/null (a candidate that reads stdin cannot steal requests).
The writer and the reader are closures over the functions they need, captured at that moment.
"""

import fcntl
import json
import os
from dataclasses import dataclass
from typing import Callable, Optional

from .. import PROTOCOL_VERSION

MESSAGE_FD = 3
REQUEST_FD = 0
PRIVATE_FD_FLOOR = 200
MAX_REQUEST_BYTES = 16 * 1024 * 1024
READ_CHUNK_BYTES = 64 * 1024


class ProtocolError(Exception):
    """The parent broke the protocol (a bad request line). The worker exits with status 2."""


@dataclass(frozen=True)
class Channel:
    """`send(type, **fields)` writes one message; `receive()` returns the next request or None at EOF."""

    send: Callable[..., None]
    receive: Callable[[], Optional[dict]]


def private_copy(fd: int) -> int:
    """A close-on-exec copy of `fd` at PRIVATE_FD_FLOOR or above, out of the way of numbered fds."""
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, PRIVATE_FD_FLOOR)


def open_channel(message_fd: int = MESSAGE_FD, request_fd: int = REQUEST_FD) -> Channel:
    """Takes over fd 3 and stdin. Raises ProtocolError when fd 3 is not open."""
    try:
        write_fd = private_copy(message_fd)
    except OSError as error:
        raise ProtocolError(
            f"fd {message_fd} is not open: start the worker with a pipe on fd 3 (docs/worker-protocol.md)"
        ) from error
    os.close(message_fd)
    read_fd = private_copy(request_fd)
    null_fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null_fd, request_fd)
    os.close(null_fd)
    return Channel(send=_make_writer(write_fd), receive=_make_reader(read_fd))


def _make_writer(fd: int) -> Callable[..., None]:
    dumps = json.dumps
    write = os.write

    def send(message_type: str, **fields) -> None:
        message = {"v": PROTOCOL_VERSION, "type": message_type, **fields}
        data = (dumps(message, allow_nan=False, separators=(",", ":")) + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            written = write(fd, view)
            view = view[written:]

    return send


def _make_reader(fd: int) -> Callable[[], Optional[dict]]:
    loads = json.loads
    read = os.read
    pending = bytearray()

    def parse(line: bytes) -> dict:
        try:
            message = loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            raise ProtocolError(f"request line is not JSON: {error}") from error
        if not isinstance(message, dict):
            raise ProtocolError(f"expected a JSON object on stdin, got {type(message).__name__}")
        if message.get("v") != PROTOCOL_VERSION:
            raise ProtocolError(f"expected `v` to be {PROTOCOL_VERSION}, got {message.get('v')!r}")
        return message

    def receive() -> Optional[dict]:
        while True:
            end = pending.find(b"\n")
            if end >= 0:
                line = bytes(pending[:end])
                del pending[: end + 1]
                if line.strip():
                    return parse(line)
                continue
            if len(pending) > MAX_REQUEST_BYTES:
                raise ProtocolError(f"request line longer than {MAX_REQUEST_BYTES} bytes")
            chunk = read(fd, READ_CHUNK_BYTES)
            if not chunk:
                if pending.strip():
                    line = bytes(pending)
                    pending.clear()
                    return parse(line)
                return None
            pending.extend(chunk)

    return receive
