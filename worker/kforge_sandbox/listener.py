"""The hand-over socket's listener, made by the launcher before the candidate's namespaces exist.

The launcher binds it at the path the parent names (`--handover-socket`) and the worker inherits
its descriptor (at DESCRIPTOR, named by LISTENER_VARIABLE). The candidate's code can make no Unix
socket of its own (seccomp.py); the judge connects to this one to receive output descriptors
(kforge_worker/protocol/handover_socket.py).
"""

import contextlib
import os
import socket
from typing import Iterator

#: The variable naming the listening descriptor the launcher left to the worker.
LISTENER_VARIABLE = "KFORGE_HANDOVER_LISTENER"
#: Where the worker finds the listener: the first descriptor after the protocol's 0-3.
DESCRIPTOR = 4
#: The longest path a Unix socket address holds (sun_path's 108 bytes, less the closing zero).
MAX_ADDRESS_BYTES = 107


@contextlib.contextmanager
def unix_address(path: str) -> Iterator[str]:
    """An address for the socket at `path` that fits a Unix socket address: the path itself, or,
    when longer, the name through `/proc/self/fd/N` of its folder held open meanwhile (a scratch
    under a long temporary folder would otherwise leave the hand-over to the pipe)."""
    if len(os.fsencode(path)) <= MAX_ADDRESS_BYTES:
        yield path
        return
    folder = os.open(os.path.dirname(path) or ".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield f"/proc/self/fd/{folder}/{os.path.basename(path)}"
    finally:
        os.close(folder)


def listen(path: str) -> socket.socket:
    """A listening Unix stream socket bound at `path` (a file already there is replaced), mode
    0600, backlog 1."""
    if os.path.lexists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with unix_address(path) as address:
            listener.bind(address)
        os.chmod(path, 0o600)
        listener.listen(1)
    except OSError:
        listener.close()
        raise
    return listener
