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


@pytest.fixture
def pair(tmp_path):
    path = str(tmp_path / "handover.sock")
    sender, receiver = DescriptorSender(listen(path)), DescriptorReceiver(path)
    yield sender, receiver, path
    sender.close()
    receiver.close()


def _hand_over(sender, receiver, output_id: str, contents: bytes):
    """One output's descriptor from the worker's end to the judge's: (what the judge read back
    through the descriptor it got or None, the judge's problem, the worker's problem)."""
    assert receiver.connect() is None
    descriptor = _memfd(contents)
    sent = []
    thread = threading.Thread(target=lambda: sent.append(sender.send(output_id, descriptor)))
    thread.start()
    received, problem = receiver.receive(output_id)
    thread.join()
    os.close(descriptor)  # the worker's copy: the judge's stays valid
    read = None
    if received is not None:
        assert os.get_inheritable(received) is False
        read = os.pread(received, 64, 0)
        os.close(received)
    return read, problem, sent[0]


def test_each_output_s_descriptor_reaches_the_judge_on_a_connection_of_its_own(pair):
    sender, receiver, path = pair
    for index in range(3):
        assert _hand_over(sender, receiver, f"correctness-{index}", f"output {index}".encode()) == (
            f"output {index}".encode(),
            None,
            None,
        )
    sender.close()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as late:
        with pytest.raises(ConnectionRefusedError):
            late.connect(path)


def test_a_descriptor_for_another_output_goes_unused_and_the_pipe_takes_over(pair):
    sender, receiver, _ = pair
    assert receiver.connect() is None
    descriptor = _memfd(b"stale")
    thread = threading.Thread(target=sender.send, args=("timed-1", descriptor))
    thread.start()
    received, problem = receiver.receive("timed-2")
    thread.join()
    os.close(descriptor)
    assert received is None and problem == "the hand-over connection did not carry this output's id and one descriptor"
    assert receiver.available is False and receiver.connect() == problem  # every later output by pipe


def test_a_connection_taken_by_other_code_is_the_worker_s_rejection(pair, monkeypatch):
    """Code of the candidate's that accepts the judge's connection first: the judge may take what
    it sends, but the worker's own accept then finds nothing, and says so."""
    sender, receiver, path = pair
    monkeypatch.setattr(handover_socket, "PATIENCE_S", 0.3)
    assert receiver.connect() is None
    thief = socket.socket(fileno=os.dup(sender.listener.fileno()))
    stolen, _ = thief.accept()
    forged = _memfd(b"the right answer")
    socket.send_fds(stolen, [b"correctness-0"], [forged])
    stolen.close()
    received, problem = receiver.receive("correctness-0")
    assert problem is None and os.pread(received, 64, 0) == b"the right answer"
    honest = _memfd(b"the kernel's answer")
    assert sender.send("correctness-0", honest) == (
        "the judge's connection was not there to accept (TimeoutError): other code took it"
    )
    for opened in (received, forged, honest):
        os.close(opened)
    thief.detach()


@pytest.mark.parametrize("interference", ["second message", "held open"])
def test_more_than_the_worker_sends_leaves_the_output_to_the_pipe(pair, monkeypatch, interference):
    """Code of the candidate's that sends on the worker's accepted connection, or keeps a copy of
    it open: the judge uses nothing that came on it."""
    sender, receiver, _ = pair
    monkeypatch.setattr(handover_socket, "PATIENCE_S", 0.3)
    assert receiver.connect() is None
    connection, _ = sender.listener.accept()
    first, second = _memfd(b"a"), _memfd(b"b")
    socket.send_fds(connection, [b"correctness-0"], [first])
    if interference == "second message":
        socket.send_fds(connection, [b"correctness-0"], [second])
        connection.close()
        expected = "the hand-over connection did not end as sent (more than the worker sends)"
    else:
        expected = "the hand-over connection did not end as sent (TimeoutError)"
    received, problem = receiver.receive("correctness-0")
    assert received is None and problem == expected
    connection.close()
    for opened in (first, second):
        os.close(opened)


def test_a_connection_without_a_descriptor_goes_unused(pair):
    sender, receiver, _ = pair
    assert receiver.connect() is None
    connection, _ = sender.listener.accept()
    connection.sendall(b"correctness-0")
    connection.close()
    assert receiver.receive("correctness-0") == (
        None,
        "the hand-over connection did not carry this output's id and one descriptor",
    )


def test_the_worker_rejects_its_stage_when_its_descriptor_cannot_go(tmp_path, monkeypatch):
    from kforge_worker.protocol.errors import StageFailure
    from kforge_worker.protocol.handover import Handover

    monkeypatch.setattr(handover_socket, "PATIENCE_S", 0.2)
    sender = DescriptorSender(listen(str(tmp_path / "handover.sock")))
    monkeypatch.setattr(handover_socket, "_SENDER", [sender])

    class Block:
        descriptor = _memfd(b"x")

    with pytest.raises(StageFailure) as failed:
        Handover._send_descriptor("timed-3", Block())
    assert (failed.value.kind, failed.value.check) == ("rejected", "handover")
    assert "output timed-3 could not be handed over: the judge's connection was not there" in failed.value.message
    os.close(Block.descriptor)
    sender.close()


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
    assert _hand_over(sender, receiver, "correctness-0", b"far away") == (b"far away", None, None)
    sender.close()


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
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
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
    connection.close()
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
        assert receiver.connect() is None
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
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as late:
        with pytest.raises(ConnectionRefusedError):
            late.connect(str(path))
    assert LISTENER_VARIABLE not in os.environ
