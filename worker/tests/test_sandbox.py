"""The candidate's sandbox (worker/kforge_sandbox) against the attacks of tests/adversarial/isolation:
process reach and persistent state, each a real candidate run through both workers as the parent
starts them (kforge_bootstrap.py, `python3 -I`), once with kforge as root and once, through
`setpriv`, as an unprivileged uid (which takes the user-namespace path).

Every attack is an honest ReLU whose import tries to reach something outside its process; the tests
assert the effect (the sentinel process of the parent's user lives on and unstopped, no secret is
printed, no helper outlives the worker, the caches, the store, the checkout and the site folders are
byte for byte unchanged, the loopback server and the Unix sockets saw no connection) as well as the
verdict. The world the attacks aim at is made world-writable in the root run (only the sandbox's
read-only view keeps it intact) and owned by the worker's own uid in the unprivileged run.
"""

import contextlib
import errno
import hashlib
import json
import os
import select
import shutil
import signal
import site
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kforge_sandbox import seccomp
from kforge_sandbox import launch
from kforge_sandbox.launch import MISSING_LAYER_STATUS, Options, parse
from kforge_sandbox.report import IsolationReport
from kforge_sandbox.syscalls import AUDIT_ARCH, NUMBERS, machine
from sandbox_support import (
    SandboxLauncher,
    as_user,
    process_state,
    processes_with,
    setpriv_refusal,
    stage_candidate,
    stage_problem,
    user_namespace_refusal,
)
from verdicts import verdict
from worker_process import WORKER_ROOT, evaluate

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "adversarial"
MANIFEST = json.loads((CORPUS / "isolation" / "manifest.json").read_text())
CASES = [case["file"] for case in MANIFEST["cases"]]
SECRET = "sk-kforge-test-secret-" + os.urandom(6).hex()
UNPRIVILEGED_UID = 60124
HELPER_MARKER = "kforge-escaping-helper"
SITE_DROP = "zz_kforge_adversarial.pth"
#: Folders for the Unix server's sockets: outside the hidden ones (cache root, home, /run), the
#: private ones (/tmp, /var/tmp, /dev/shm) and any scratch, so that the candidate's view shows them.
UNIX_SOCKET_BASES = ("/srv", "/opt", "/var/lib", "/mnt")


def _digest_tree(root: Path) -> dict:
    """Relative path -> SHA-256 of contents (files) or link target (links), for every entry."""
    digests = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            digests[key] = "link:" + os.readlink(path)
        elif path.is_file():
            digests[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


class UnixServer:
    """A stream and a datagram socket, mode 0777, in a fresh 0755 folder under one of
    UNIX_SOCKET_BASES; each connection or datagram is counted and answered with `reply`. One thread
    serves both; it stops by itself after `lifetime` seconds or `most` contacts, or on `close()`."""

    def __init__(self, lifetime: float = 1800.0, most: int = 32):
        base = next((path for path in UNIX_SOCKET_BASES if os.path.isdir(path) and os.access(path, os.W_OK)), None)
        if base is None:
            pytest.skip(f"no writable folder for the Unix server's sockets among {UNIX_SOCKET_BASES}")
        self.folder = Path(tempfile.mkdtemp(prefix="kforge-unix-", dir=base))
        os.chmod(self.folder, 0o755)
        self.stream_path = str(self.folder / "stream.sock")
        self.dgram_path = str(self.folder / "dgram.sock")
        self.reply = ("kforge-unix-reply-" + os.urandom(6).hex()).encode()
        self.contacts = 0
        self.most = most
        self.deadline = time.monotonic() + lifetime
        self.stopping = threading.Event()
        self.stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.stream.bind(self.stream_path)
        self.stream.listen(8)
        self.dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.dgram.bind(self.dgram_path)
        for path in (self.stream_path, self.dgram_path):
            os.chmod(path, 0o777)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stopping.is_set() and self.contacts < self.most and time.monotonic() < self.deadline:
            try:
                ready, _, _ = select.select([self.stream, self.dgram], [], [], 0.25)
            except (OSError, ValueError):
                return
            for server in ready:
                self.contacts += 1
                try:
                    if server is self.stream:
                        connection, _ = server.accept()
                        with connection:
                            connection.settimeout(1)
                            connection.sendall(self.reply)
                    else:
                        _data, sender = server.recvfrom(256)
                        if sender:
                            server.sendto(self.reply, sender)
                except OSError:
                    pass

    def serving(self) -> bool:
        """Whether it still listens (a stopped server would make a refused connection prove nothing)."""
        return self.thread.is_alive()

    def close(self):
        self.stopping.set()
        self.thread.join(timeout=5)
        self.stream.close()
        self.dgram.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class World:
    """What the attacks aim at: a cache root with baselines, a build and a store, the orchestrator's
    stand-in (the sentinel: a process with a secret in its environment and a marker in its cwd),
    a project checkout, a loopback server and Unix sockets outside the hidden folders."""

    def __init__(self, root: Path, owner_uid):
        self.unix = UnixServer()  # first: it may skip, and nothing else is started yet
        self.root = root
        self.owner_uid = owner_uid
        self.cache = root / "cache"
        self.baselines = self.cache / "baselines"
        self.builds = self.cache / "builds"
        self.staging = self.cache / "staging"
        self.compile = self.cache / "compile"
        self.store = self.cache / "kforge.db"
        self.marker = self.cache / "marker.txt"
        self.home = root / "home"
        self.checkout = root / "checkout"
        self.orchestrator_cwd = root / "orchestrator"
        self.cwd_marker = "orchestrator-only-" + os.urandom(4).hex()
        for folder in (
            self.baselines,
            self.builds / ("a" * 64) / "ext",
            self.staging,
            self.compile / "inductor" / "fxgraph" / "ab",
            self.compile / "triton" / "CD",
            self.home,
            self.checkout / "problems",
            self.orchestrator_cwd,
        ):
            folder.mkdir(parents=True, exist_ok=True)
        (self.baselines / ("b" * 64 + ".json")).write_text(
            json.dumps({"key": "b" * 64, "eager": {"times_ms": [0.5, 0.6]}})
        )
        (self.builds / ("a" * 64) / "ext" / "ext.so").write_bytes(b"\x7fELF honest object code")
        (self.builds / ("a" * 64 + ".json")).write_text('{"key": "' + "a" * 64 + '"}')
        os.symlink(str(root / "elsewhere"), self.staging / ("c" * 64))
        (self.compile / "inductor" / "fxgraph" / "ab" / "entry").write_bytes(b"an honest compiled graph")
        (self.compile / "triton" / "CD" / "kernel.cubin").write_bytes(b"an honest cubin")
        connection = sqlite3.connect(self.store)
        connection.execute("CREATE TABLE candidates (id INTEGER PRIMARY KEY, verdict TEXT, speedup REAL)")
        connection.execute("INSERT INTO candidates (verdict, speedup) VALUES ('incorrect', NULL)")
        connection.commit()
        connection.close()
        self.problem = self.checkout / "problems" / "relu.py"
        self.problem.write_text((CORPUS / "problems" / "relu.py").read_text())
        (self.orchestrator_cwd / self.cwd_marker).write_text("")
        for path in [root, *root.rglob("*")]:
            if path.is_symlink():
                continue
            if owner_uid is None:
                os.chmod(path, 0o777 if path.is_dir() else 0o666)
            else:
                os.chown(path, owner_uid, owner_uid)
        prefix = [] if owner_uid is None else as_user(owner_uid)
        self.sentinel = subprocess.Popen(
            prefix + [sys.executable, "-c", "import time; time.sleep(600)"],
            cwd=self.orchestrator_cwd,
            env={"PATH": os.environ.get("PATH", ""), "OPENAI_API_KEY": SECRET},
        )
        self.nice = None
        for _ in range(100):
            self.nice = _nice(self.sentinel.pid)
            if self.nice is not None:
                break
            time.sleep(0.01)
        self.connections = 0
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(8)
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()
        self.before = self.snapshot()

    def _accept(self):
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            connection.close()

    def targets(self) -> dict:
        return {
            "sentinel_pid": self.sentinel.pid,
            "orchestrator_pid": self.sentinel.pid,
            "store": str(self.store),
            "marker": str(self.marker),
            "port": self.port,
            "worker_dir": str(WORKER_ROOT),
            "problem": str(self.problem),
            "checkout": str(self.checkout),
            "baselines": str(self.baselines),
            "builds": str(self.builds),
            "staging": str(self.staging),
            "compile": str(self.compile),
            "unix_stream": self.unix.stream_path,
            "unix_dgram": self.unix.dgram_path,
        }

    def snapshot(self) -> dict:
        return {"cache": _digest_tree(self.cache), "checkout": _digest_tree(self.checkout)}

    def close(self):
        self.sentinel.kill()
        self.sentinel.wait()
        self.server.close()
        self.unix.close()


def _site_drops() -> list:
    """Every path s01 tries outside its scratch (it creates files only where none exist)."""
    drops = [WORKER_ROOT / name for name in ("sitecustomize.py", "usercustomize.py")]
    drops.append(WORKER_ROOT / "kforge_worker" / SITE_DROP)
    drops += [Path(folder) / SITE_DROP for folder in site.getsitepackages()]
    return drops


def _run_all(world: World, root: Path, launcher: SandboxLauncher) -> dict:
    problem_source = CORPUS / "problems" / "relu.py"

    def one(name: str):
        work = root / Path(name).stem
        scratch = work / "scratch"
        launcher("candidate", scratch)
        candidate = stage_candidate(CORPUS / "isolation" / name, scratch, world.targets())
        problem = stage_problem(problem_source, scratch)
        if launcher.as_uid is not None:
            for path in [work, *work.rglob("*")]:
                os.chown(path, launcher.as_uid, launcher.as_uid)
        return evaluate(
            problem,
            candidate,
            work,
            scratch / "build",
            launcher=launcher,
            perf_trials=4,
            warmup_trials=1,
            sample_calls=(1,),
        )

    existing = {path for path in _site_drops() if path.exists()}
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            jobs = {name: pool.submit(one, name) for name in CASES}
            results = {name: job.result() for name, job in jobs.items()}
        time.sleep(1.0)  # a helper that survived would write within 0.25 s
        results["#helpers"] = processes_with(HELPER_MARKER)
        results["#after"] = world.snapshot()
        results["#sentinel"] = (process_state(world.sentinel.pid), _nice(world.sentinel.pid))
        results["#site"] = [str(path) for path in _site_drops() if path.exists() and path not in existing]
        results["#unix_serving"] = world.unix.serving()
        return results
    finally:
        for pid in processes_with(HELPER_MARKER):
            os.kill(pid, signal.SIGKILL)
        for path in _site_drops():
            if path.exists() and path not in existing:
                path.unlink()
        if world.sentinel.poll() is None and process_state(world.sentinel.pid) == "T":
            os.kill(world.sentinel.pid, signal.SIGCONT)


def _nice(pid: int):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[16])
    except OSError:
        return None


def _printed(result) -> str:
    return result.candidate.stdout + result.candidate.stderr + json.dumps(result.candidate.messages)


@contextlib.contextmanager
def _shared_root(prefix: str):
    """A folder that any uid can reach, outside pytest's private base: another pytest run on the
    host makes that base private again while this module runs (its candidates then cannot read
    their problem files), and a world here must not depend on who else runs tests."""
    root = Path(tempfile.mkdtemp(prefix=f"kforge-{prefix}-"))
    try:
        _open_to_others(root)
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _open_to_others(root: Path) -> None:
    """Lets any uid reach `root` (pytest's folders are private), so that only the sandbox stands
    between the candidate and the world."""
    for folder in [root, *root.parents]:
        if folder == Path("/"):
            break
        os.chmod(folder, os.stat(folder).st_mode | 0o005)


@pytest.fixture(scope="module")
def as_root():
    if os.geteuid() != 0:
        pytest.skip("this run is kforge as root (the GPU host, CI containers); the unprivileged run covers the rest")
    with _shared_root("sandbox-root") as root:
        world = World(root / "world", owner_uid=None)
        try:
            # As the parent does: the cache root and the parent's home are hidden.
            launcher = SandboxLauncher(hide=[world.cache, world.home, Path.home()], expose=[world.staging])
            yield world, _run_all(world, root / "runs", launcher)
        finally:
            world.close()


@pytest.fixture(scope="module")
def as_user_uid():
    refusal = setpriv_refusal() or user_namespace_refusal(UNPRIVILEGED_UID)
    if refusal:
        pytest.skip(refusal)
    with _shared_root("sandbox-user") as root:
        world = World(root / "world", owner_uid=UNPRIVILEGED_UID)
        try:
            launcher = SandboxLauncher(hide=[world.cache, world.home], expose=[world.staging], as_uid=UNPRIVILEGED_UID)
            yield world, _run_all(world, root / "runs", launcher)
        finally:
            world.close()


@pytest.fixture(params=["root", "unprivileged"])
def run(request):
    return request.getfixturevalue("as_root" if request.param == "root" else "as_user_uid")


@pytest.mark.e2e
@pytest.mark.parametrize("name", CASES)
def test_attack_leaves_the_verdict_honest(run, name):
    _world, results = run
    result = results[name]
    assert verdict(result) == ("correct", None), (result.violation, result.failures, result.candidate.stderr[-3000:])
    assert result.exit_codes == {"reference": 0, "candidate": 0}
    assert result.timed_judgement is not None and result.timed_judgement["passed"] is True


@pytest.mark.e2e
def test_every_layer_is_in_force(run):
    world, results = run
    for name in CASES:
        isolation = results[name].message("candidate", "hello")["environment"]["isolation"]
        missing = isolation["missing"]
        if world.owner_uid is not None:
            # An ordinary user gets no cgroup without systemd's delegation; the PID namespace ends
            # the tree on its own (test_no_helper_outlives_its_evaluation).
            missing = [entry for entry in missing if not entry.startswith("cgroup: ")]
            assert isolation["user"].endswith("in a user namespace)") and "user" in isolation["namespaces"]
        else:
            assert isolation["user"].endswith("(no passwd entry)") and isolation["cgroup"], isolation
        assert missing == [], (name, isolation)
        assert {"pid", "mount", "network"} <= set(isolation["namespaces"])
        assert isolation["seccomp"] and isolation["no_new_privs"] and isolation["filesystem"] == "read-only view"
        assert isolation["python"] == "isolated (-I)" and isolation["descriptors"] == "0-3 and the hand-over listener"


@pytest.mark.e2e
def test_no_other_process_is_reached(run):
    world, results = run
    state, nice = results["#sentinel"]
    assert state is not None and state != "T", f"the sentinel is {state}"
    assert nice == world.nice
    for name in ("p01_ptrace_attach.py", "p02_orchestrator_secrets.py", "p03_signal_others.py"):
        printed = _printed(results[name])
        # (The sandbox's own init may take a SIGSTOP from its user without effect: it has no handler.)
        assert "attached to" not in printed and f"ATTACK p03: stopped {world.sentinel.pid}" not in printed
        assert SECRET not in printed and world.cwd_marker not in printed, name
    assert "refused: Operation not permitted" in _printed(results["p01_ptrace_attach.py"])


@pytest.mark.e2e
def test_no_helper_outlives_its_evaluation(run):
    world, results = run
    assert results["#helpers"] == []
    assert not world.marker.exists()


@pytest.mark.e2e
def test_no_connection_leaves_the_sandbox(run):
    world, _results = run
    assert world.connections == 0


@pytest.mark.e2e
def test_no_unix_socket_outside_the_scratch_is_reached(run):
    """A 0777 socket file in a folder the view shows (read-only, which connecting ignores) is out
    of reach: the filter refuses every AF_UNIX socket that could be pointed at a path."""
    world, results = run
    assert results["#unix_serving"], "the Unix server stopped before the attacks ended"
    assert world.unix.contacts == 0, "a connection or datagram reached the host's Unix socket"
    printed = _printed(results["p06_unix_socket.py"])
    assert world.unix.reply.decode() not in printed
    assert f"stream {world.unix.stream_path} refused: [Errno 1] Operation not permitted" in printed, printed[-3000:]
    assert "datagram socketpair refused: [Errno 1] Operation not permitted" in printed, printed[-3000:]


@pytest.mark.e2e
def test_no_persistent_state_is_changed(run):
    world, results = run
    assert results["#after"] == world.before
    assert results["#site"] == []
    assert not world.marker.exists(), "no start-up hook ran"


def test_seccomp_program_denies_every_listed_call_on_both_architectures():
    for architecture in NUMBERS:
        instructions = seccomp.program(architecture)
        denied = {k for code, _jt, _jf, k in instructions if code == seccomp.BPF_JMP_JEQ_K}
        for name in ("ptrace", "process_vm_readv", "perf_event_open", "mount", "unshare", "bpf", "keyctl"):
            assert NUMBERS[architecture][name] in denied, (architecture, name)
        assert instructions[-3][3] == seccomp.SECCOMP_RET_ALLOW


def _run_filter(instructions, architecture: str, name: str, *args: int) -> int:
    """What the classic-BPF `instructions` return for system call `name` of `architecture` with
    these arguments (the kernel's seccomp_data: nr, arch, instruction pointer, six 64-bit args)."""
    arguments = list(args) + [0] * (6 - len(args))
    words = {0: NUMBERS[architecture][name], 4: AUDIT_ARCH[architecture]}
    for index, value in enumerate(arguments):
        words[16 + 8 * index] = value & 0xFFFFFFFF
        words[20 + 8 * index] = value >> 32
    accumulator, pc = 0, 0
    while True:
        code, jt, jf, k = instructions[pc]
        if code == seccomp.BPF_LD_W_ABS:
            accumulator = words[k]
        elif code == seccomp.BPF_ALU_AND_K:
            accumulator &= k
        elif code == seccomp.BPF_RET_K:
            return k
        else:
            taken = {
                seccomp.BPF_JMP_JEQ_K: accumulator == k,
                seccomp.BPF_JMP_JGE_K: accumulator >= k,
                seccomp.BPF_JMP_JSET_K: bool(accumulator & k),
            }[code]
            pc += jt if taken else jf
        pc += 1


def test_seccomp_program_refuses_unix_sockets_that_could_reach_a_path_on_both_architectures():
    eperm = seccomp.SECCOMP_RET_ERRNO | errno.EPERM
    allow = seccomp.SECCOMP_RET_ALLOW
    cloexec_nonblock = socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK
    for architecture in NUMBERS:
        instructions = seccomp.program(architecture)

        def verdict_of(name, *args):
            return _run_filter(instructions, architecture, name, *args)

        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_SEQPACKET, socket.SOCK_RAW):
            assert verdict_of("socket", socket.AF_UNIX, kind) == eperm, (architecture, kind)
            assert verdict_of("socket", socket.AF_UNIX, kind | cloexec_nonblock) == eperm, (architecture, kind)
            assert verdict_of("socket", socket.AF_INET, kind) == allow, (architecture, kind)
            assert verdict_of("socket", socket.AF_INET6, kind) == allow, (architecture, kind)
        # The kernel reads the domain as an int: high bits must not smuggle AF_UNIX past the filter.
        assert verdict_of("socket", (1 << 32) | socket.AF_UNIX, socket.SOCK_STREAM) == eperm, architecture
        assert verdict_of("socket", socket.AF_NETLINK, socket.SOCK_RAW) == allow, architecture
        for kind in (socket.SOCK_STREAM, socket.SOCK_SEQPACKET):
            assert verdict_of("socketpair", socket.AF_UNIX, kind) == allow, (architecture, kind)
            assert verdict_of("socketpair", socket.AF_UNIX, kind | socket.SOCK_CLOEXEC) == allow, (architecture, kind)
        for kind in (socket.SOCK_DGRAM, socket.SOCK_RAW, socket.SOCK_DGRAM | cloexec_nonblock):
            assert verdict_of("socketpair", socket.AF_UNIX, kind) == eperm, (architecture, kind)
        assert verdict_of("socketpair", socket.AF_INET, socket.SOCK_DGRAM) == allow, architecture
        # What was decided before is unchanged.
        assert verdict_of("ptrace", 16, 1) == eperm and verdict_of("clone3") == seccomp.SECCOMP_RET_ERRNO | errno.ENOSYS
        assert verdict_of("clone", 0x10000000) == eperm and verdict_of("clone", 0x01200011) == allow, architecture


def test_the_two_parts_of_the_filter_together_are_the_whole_filter():
    """The launcher's `process` part leaves Unix sockets to the `sockets` part, which touches
    nothing else; stacked (the kernel takes the stricter answer) they decide as `all` does."""
    eperm = seccomp.SECCOMP_RET_ERRNO | errno.EPERM
    allow = seccomp.SECCOMP_RET_ALLOW
    calls = [
        ("socket", socket.AF_UNIX, socket.SOCK_SEQPACKET),
        ("socket", socket.AF_INET, socket.SOCK_STREAM),
        ("socketpair", socket.AF_UNIX, socket.SOCK_DGRAM),
        ("socketpair", socket.AF_UNIX, socket.SOCK_STREAM),
        ("ptrace", 16, 1),
        ("clone", 0x10000000),
        ("clone", 0x01200011),
        ("clone3",),
        ("mount",),
        ("getpid",),
    ]
    for architecture in NUMBERS:
        parts = {part: seccomp.program(architecture, part) for part in seccomp.PARTS}
        for name, *args in calls:
            if name not in NUMBERS[architecture]:
                continue
            answers = {part: _run_filter(code, architecture, name, *args) for part, code in parts.items()}
            # SECCOMP_RET_ERRNO sorts below SECCOMP_RET_ALLOW: the smaller action value wins.
            assert min(answers["process"], answers["sockets"]) == answers["all"], (architecture, name, args, answers)
        assert _run_filter(parts["process"], architecture, "socket", socket.AF_UNIX, socket.SOCK_SEQPACKET) == allow
        assert _run_filter(parts["sockets"], architecture, "socket", socket.AF_UNIX, socket.SOCK_SEQPACKET) == eperm
        assert _run_filter(parts["sockets"], architecture, "ptrace", 16, 1) == allow
    with pytest.raises(KeyError):
        seccomp.program("x86_64", "network")


def _under_the_filter(attempt) -> dict:
    """Runs `attempt()` (returning a JSON-able value) in a forked child that installed this
    machine's filter the way a sandboxed worker does: the launcher's `process` part, then the
    `sockets` part sealed on every thread at once. `attempt` runs on a thread started before the
    seal. The child's answer (and whether a Unix socket could still be made before the seal), or
    the error text with which it failed."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            seccomp.install(machine(), "process")
            before = _errno_of(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).close())
            sealed, box = threading.Event(), {}

            def on_a_thread():
                sealed.wait()
                try:
                    box["answer"] = attempt()
                except BaseException as error:  # noqa: BLE001 - reported to the parent
                    box["error"] = f"{type(error).__name__}: {error}"

            thread = threading.Thread(target=on_a_thread)
            thread.start()
            try:
                seccomp.seal_sockets(machine())
            finally:
                sealed.set()
                thread.join()
            answer = {**box, "before_seal": before}
        except BaseException as error:  # whatever happens must reach the parent
            answer = {"error": f"{type(error).__name__}: {error}"}
        try:
            os.write(write_end, json.dumps(answer).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        said = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(said)


def _errno_of(action):
    try:
        action()
        return 0
    except OSError as error:
        return error.errno


def test_installed_filter_refuses_unix_sockets_but_not_pairs_or_inet(tmp_path):
    if machine() not in NUMBERS:
        pytest.skip(f"no filter for {machine()}")
    probe = _under_the_filter(lambda: _errno_of(lambda: socket.socket(socket.AF_INET).close()))
    if "error" in probe:
        pytest.skip(f"this kernel does not take the filter: {probe['error']}")
    # A listening path socket, outside any sandbox: what the filter must keep out of reach.
    path = str(tmp_path / "listening.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)

    def attempt():
        def pair(kind):
            one, other = socket.socketpair(socket.AF_UNIX, kind)
            with one, other:
                one.sendall(b"ping")
                return other.recv(4).decode()

        def connect():
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
                client.connect(path)

        def inet():
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
                tcp.bind(("127.0.0.1", 0))
                tcp.listen(1)

        return {
            "unix stream": _errno_of(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()),
            "unix dgram": _errno_of(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).close()),
            "unix seqpacket": _errno_of(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).close()),
            "connect": _errno_of(connect),
            "dgram pair": _errno_of(lambda: pair(socket.SOCK_DGRAM)),
            "stream pair": pair(socket.SOCK_STREAM),
            "seqpacket pair": pair(socket.SOCK_SEQPACKET),
            "default pair": _errno_of(lambda: [end.close() for end in socket.socketpair()]),
            "inet": _errno_of(inet),
            "inet6": _errno_of(lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).close()),
        }

    try:
        result = _under_the_filter(attempt)
        server.settimeout(0.5)
        with pytest.raises(socket.timeout):
            server.accept()  # nothing connected
    finally:
        server.close()
    assert "answer" in result, result
    assert result["before_seal"] == 0, result  # CUDA's own sockets, opened as it starts, still work
    answer = result["answer"]
    assert answer.pop("inet6") in (0, errno.EAFNOSUPPORT), result  # (a kernel without IPv6 says so)
    assert answer == {
        "unix stream": errno.EPERM,
        "unix dgram": errno.EPERM,
        "unix seqpacket": errno.EPERM,
        "connect": errno.EPERM,
        "dgram pair": errno.EPERM,
        "stream pair": "ping",
        "seqpacket pair": "ping",
        "default pair": 0,
        "inet": 0,
    }, result
    # Outside the filter the same calls work, so the EPERMs above are the filter's.
    assert _errno_of(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).close()) == 0


def test_launcher_rejects_a_bad_option_with_status_2(capfd):
    with pytest.raises(SystemExit) as exited:
        parse(["--sandbox", "sometimes", "candidate"])
    assert exited.value.code == 2
    assert "expected --sandbox to be on, off or require, got `sometimes`" in capfd.readouterr().err


def test_require_stops_a_worker_whose_isolation_lacks_a_layer():
    """`--sandbox require` (KFORGE_SANDBOX=require): a worker whose report lacks a layer exits with
    MISSING_LAYER_STATUS before its role runs, naming the layer and why. The layer is withheld by
    the test, so this holds on any machine, whatever it can isolate."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: stderr into the pipe, then the launcher's last steps before the role
        try:
            os.close(read_end)
            os.dup2(write_end, 2)
            sys.stderr = open(2, "w", buffering=1, closefd=False)  # the launcher's stderr (not pytest's capture)
            report = IsolationReport(role="reference")
            report.lack("network", "withheld by the test")
            launch._worker(Options(role="reference", sandbox="require"), report, os.getppid())
        finally:
            os._exit(99)  # reached only if the worker went on to its role
    os.close(write_end)
    with os.fdopen(read_end, errors="replace") as pipe:
        said = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == MISSING_LAYER_STATUS, (status, said)
    assert "isolation was required (KFORGE_SANDBOX=require)" in said and "network: withheld by the test" in said, said


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("example", ["level1_02_gelu/cuda_fast.py"])
def test_cuda_candidate_builds_runs_and_is_profiled_inside_the_sandbox(tmp_path, example):
    """nvcc, ninja and the driver run inside the sandbox, /dev/nvidia* stays reachable, the
    profiler's own-kernel check works under the seccomp filter, every layer is in force, and the
    outputs reach the judge, in its own PID namespace, device to device by descriptor (a legacy
    IPC handle cannot cross PID namespaces)."""
    root = Path(__file__).resolve().parents[2]
    _open_to_others(tmp_path)
    work = tmp_path / "cuda"
    scratch = work / "scratch"
    launcher = SandboxLauncher(hide=[Path.home()])
    launcher("candidate", scratch)
    candidate = scratch / "in" / "candidate" / "cuda_fast.py"
    candidate.parent.mkdir(parents=True, exist_ok=True)
    candidate.write_text((root / "examples" / example).read_text())
    problem = stage_problem(root / "problems" / "level1" / "02_gelu.py", scratch)
    result = evaluate(
        problem,
        candidate,
        work,
        scratch / "build",
        launcher=launcher,
        backend="cuda",
        device="cuda:0",
        preset="gpu",
        guard=None,
        perf_trials=20,
        warmup_trials=3,
        sample_calls=(5, 19),
    )
    assert verdict(result) == ("correct", None), (result.violation, result.failures, result.candidate.stderr[-3000:])
    isolation = result.message("candidate", "hello")["environment"]["isolation"]
    assert isolation["seccomp"] and {"pid", "mount", "network"} <= set(isolation["namespaces"]), isolation
    checks = {
        check["check"]: check["status"]
        for message in result.candidate.of_type("guard-checks")
        for check in message["checks"]
    }
    assert checks.get("own-kernel") == "passed", checks
    received = result.reference.of_type("handover-received")
    assert received and {message["transport"] for message in received} == {"cuda-ipc"}, received


SPAWNS_A_PROCESS = """
import subprocess

import torch
import torch.nn as nn

subprocess.run(["true"], check=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
"""


@pytest.mark.parametrize("sandboxed", [True, False])
def test_what_the_sandbox_confines_is_a_note_only_inside_it(tmp_path, sandboxed):
    """A candidate that starts a process is refused before it runs where nothing confines it, and
    only noted where the sandbox's layers are all in force (static_stage.confine)."""
    _open_to_others(tmp_path)
    work = tmp_path / "spawn"
    scratch = work / "scratch"
    launcher = SandboxLauncher(hide=[Path.home()]) if sandboxed else None
    if launcher is not None:
        launcher("candidate", scratch)
    candidate = scratch / "in" / "candidate" / "spawn.py"
    candidate.parent.mkdir(parents=True, exist_ok=True)
    candidate.write_text(SPAWNS_A_PROCESS)
    problem = stage_problem(CORPUS / "problems" / "relu.py", scratch)
    result = evaluate(
        problem,
        candidate,
        work,
        scratch / "build",
        launcher=launcher,
        run_timing=False,
        guard={"policy": "kernelbench"},
    )
    findings = [
        finding for finding in result.candidate.of_type("guard")[0]["findings"] if finding["check"] == "sandbox"
    ]
    assert findings, result.candidate.of_type("guard")
    isolation = result.message("candidate", "hello")["environment"].get("isolation")
    if sandboxed:
        missing = [entry for entry in isolation["missing"] if not entry.startswith("cgroup")]
        if missing:
            pytest.skip(f"the sandbox lacks layers here: {missing}")
        assert {finding["severity"] for finding in findings} == {"note"}, findings
        assert "the sandbox confines it" in findings[0]["message"]
        assert result.failures.get("candidate", {}).get("check") != "sandbox", result.failures
    else:
        assert findings[0]["severity"] == "reject"
        assert (result.failures["candidate"]["kind"], result.failures["candidate"]["check"]) == ("rejected", "sandbox")
