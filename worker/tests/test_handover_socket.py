"""The hand-over socket (kforge_worker/protocol/handover_socket.py): a descriptor goes from the
candidate's worker to the judge, one per output, and anything else breaks the socket for good.

A memfd stands in for a CUDA allocation's descriptor: what is tested here is the way, not the
driver (test_gpu.py covers the device-to-device copy)."""

import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from kforge_sandbox.listener import DESCRIPTOR, LISTENER_VARIABLE, listen
from kforge_worker.protocol import handover_socket
from kforge_worker.protocol.handover_socket import DescriptorReceiver, DescriptorSender

WORKER_ROOT = Path(__file__).resolve().parent.parent


def _memfd(contents: bytes) -> int:
    descriptor = os.memfd_create("output")
    os.write(descriptor, contents)
    return descriptor


def _send_later(sender: DescriptorSender, output_id: str, descriptor: int) -> threading.Thread:
    thread = threading.Thread(target=sender.send, args=(output_id, descriptor))
    thread.start()
    return thread


@pytest.fixture
def pair(tmp_path):
    path = str(tmp_path / "handover.sock")
    sender, receiver = DescriptorSender(listen(path)), DescriptorReceiver(path)
    yield sender, receiver, path
    sender.close()
    receiver.close()


def test_a_descriptor_reaches_the_judge_with_its_output_id(pair):
    sender, receiver, path = pair
    assert receiver.connect() is None
    for index in range(2):
        descriptor = _memfd(f"output {index}".encode())
        thread = _send_later(sender, f"correctness-{index}", descriptor)
        received, problem = receiver.receive(f"correctness-{index}")
        thread.join()
        os.close(descriptor)  # the sender's copy: the judge's stays valid
        assert problem is None
        assert os.pread(received, 64, 0) == f"output {index}".encode()
        assert os.get_inheritable(received) is False
        os.close(received)
    # The worker took the one connection and closed its listener: nobody else can connect now.
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as late:
        with pytest.raises(ConnectionRefusedError):
            late.connect(path)


def test_a_descriptor_for_another_output_breaks_the_socket(pair):
    sender, receiver, _ = pair
    receiver.connect()
    descriptor = _memfd(b"stale")
    thread = _send_later(sender, "timed-1", descriptor)
    received, problem = receiver.receive("timed-2")
    thread.join()
    assert received is None and problem == "a descriptor came for another output"
    assert receiver.available is False
    assert receiver.receive("timed-3") == (None, problem)  # every later output comes by pipe
    os.close(descriptor)


def test_a_message_without_a_descriptor_or_with_two_breaks_the_socket(tmp_path):
    path = str(tmp_path / "handover.sock")
    listener = listen(path)
    receiver = DescriptorReceiver(path)
    receiver.connect()
    connection, _ = listener.accept()
    connection.send(b"correctness-0")
    assert receiver.receive("correctness-0") == (None, "a hand-over message carried no descriptor, or more than one")
    receiver = DescriptorReceiver(path)
    receiver.connect()
    connection, _ = listener.accept()
    first, second = _memfd(b"a"), _memfd(b"b")
    socket.send_fds(connection, [b"correctness-0"], [first, second])
    received, problem = receiver.receive("correctness-0")
    assert received is None and problem == "a hand-over message carried no descriptor, or more than one"
    for descriptor in (first, second):
        os.close(descriptor)
    listener.close()


def test_a_silent_worker_costs_the_judge_its_patience_once(pair, monkeypatch):
    _, receiver, _ = pair
    monkeypatch.setattr(handover_socket, "PATIENCE_S", 0.2)
    assert receiver.connect() is None
    received, problem = receiver.receive("correctness-0")
    assert received is None and problem == "no descriptor came (TimeoutError)"
    assert receiver.connect() == problem


def test_the_judge_connects_only_to_a_socket(tmp_path):
    path = tmp_path / "handover.sock"
    path.write_text("not a socket")
    receiver = DescriptorReceiver(str(path))
    assert receiver.connect() == "the hand-over socket is not a socket"
    missing = DescriptorReceiver(str(tmp_path / "missing.sock"))
    assert missing.connect() == "the hand-over socket could not be reached (FileNotFoundError)"
    assert DescriptorReceiver(None).receive("x") == (None, "the request named no hand-over socket")


def test_a_path_longer_than_a_socket_address_still_works(tmp_path):
    folder = tmp_path / ("deep" * 20) / "in"
    folder.mkdir(parents=True)
    path = str(folder / "handover.sock")
    assert len(path) > 107
    sender, receiver = DescriptorSender(listen(path)), DescriptorReceiver(path)
    assert receiver.connect() is None
    descriptor = _memfd(b"far away")
    thread = _send_later(sender, "correctness-0", descriptor)
    received, problem = receiver.receive("correctness-0")
    thread.join()
    assert problem is None and os.pread(received, 64, 0) == b"far away"
    for opened in (descriptor, received):
        os.close(opened)
    sender.close()
    receiver.close()


def test_a_worker_without_a_listener_says_so():
    sender = DescriptorSender.from_environment()
    assert sender.available is False
    assert sender.send("correctness-0", 0) == "no hand-over socket was made for this worker"


FAKE_WORKER = textwrap.dedent(
    """
    import json, os, socket, sys
    from kforge_sandbox import seccomp
    from kforge_sandbox.listener import LISTENER_VARIABLE

    named = os.environ.get(LISTENER_VARIABLE)
    architecture = os.environ.pop("KFORGE_SEAL_SOCKETS", None)
    if architecture:
        seccomp.seal_sockets(architecture)
    try:
        socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).close()
        own_socket = "made"
    except PermissionError:
        own_socket = "refused"
    listener = socket.socket(fileno=int(named))
    listener.settimeout(20)
    connection, _ = listener.accept()
    memory = os.memfd_create("output")
    os.write(memory, b"from inside the sandbox")
    report = json.dumps({"named": named, "own_socket": own_socket, "sealed": bool(architecture)})
    socket.send_fds(connection, [b"correctness-0"], [memory])
    print(report, flush=True)
    """
)


def test_the_launcher_leaves_the_listener_to_the_worker_and_the_judge_reaches_it(tmp_path):
    """The launcher binds the socket before making any namespace, hands the worker the listener at
    DESCRIPTOR (and nothing else beyond 0-3), and the judge, outside, receives a descriptor the
    sandboxed worker sent; the candidate's code can make no Unix socket of its own."""
    fake = tmp_path / "fake" / "kforge_worker"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text(FAKE_WORKER)
    scratch = tmp_path / "scratch"
    for name in ("in", "home", "tmp"):
        (scratch / name).mkdir(parents=True)
    path = scratch / "in" / "handover.sock"
    command = [sys.executable, "-I", "-B", "-u", str(WORKER_ROOT / "kforge_bootstrap.py")]
    command += ["--worker-dir", str(tmp_path / "fake"), "--writable", str(scratch)]
    command += ["--read-only", str(scratch / "in"), "--handover-socket", str(path), "candidate"]
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(scratch / "home")}
    worker = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        receiver = DescriptorReceiver(str(path))
        for _ in range(200):
            if path.exists():
                break
            worker.poll()
            assert worker.returncode is None, worker.stderr.read().decode()
            threading.Event().wait(0.05)
        received, problem = receiver.receive("correctness-0")
        assert problem is None, (problem, worker.stderr.read().decode() if worker.poll() is not None else "")
        assert os.pread(received, 64, 0) == b"from inside the sandbox"
        os.close(received)
        stdout, stderr = worker.communicate(timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert worker.returncode == 0, stderr.decode()
    report = json.loads(stdout.decode().strip().splitlines()[-1])
    assert report["named"] == str(DESCRIPTOR)
    if report["sealed"]:
        assert report["own_socket"] == "refused"
    # The worker is gone and the launcher kept no copy of the listener: the socket refuses.
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as late:
        with pytest.raises(ConnectionRefusedError):
            late.connect(str(path))
    assert LISTENER_VARIABLE not in os.environ
