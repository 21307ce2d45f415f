"""Test support: the worker as a real subprocess, spoken to through its real protocol.

fd 3 of the child is the write end of a pipe (as the TypeScript parent sets it up), requests go in
on stdin, stdout and stderr land in files.
"""

import json
import os
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

from timing_driver import Batch, drive_timing
from kforge_sandbox.listener import LISTENER_VARIABLE, listen

WORKER_ROOT = Path(__file__).resolve().parent.parent
MESSAGE_TIMEOUT_SECONDS = 240


class Worker:
    """One `python3 -m kforge_worker ROLE` process."""

    def __init__(
        self,
        role: str,
        cwd: Path,
        env: Optional[Dict[str, str]] = None,
        command: Optional[List[str]] = None,
        base_env: Optional[Dict[str, str]] = None,
    ):
        """`command` replaces `python3 -m kforge_worker ROLE` (the sandbox launcher's command line);
        `base_env` replaces the inherited environment (a scrubbed one, as the parent gives)."""
        cwd.mkdir(parents=True, exist_ok=True)
        read_fd, write_fd = os.pipe()

        def give_fd_3():
            if write_fd == 3:
                os.set_inheritable(3, True)
            else:
                os.dup2(write_fd, 3)

        base = (
            base_env
            if base_env is not None
            else {**os.environ, "PYTHONPATH": str(WORKER_ROOT), "PYTHONUNBUFFERED": "1"}
        )
        environment = {**base, **(env or {})}
        self.stdout_path = cwd / f"{role}.stdout"
        self.stderr_path = cwd / f"{role}.stderr"
        with open(self.stdout_path, "wb") as stdout, open(self.stderr_path, "wb") as stderr:
            self.process = subprocess.Popen(
                command or [sys.executable, "-m", "kforge_worker", role],
                cwd=cwd,
                env=environment,
                stdin=subprocess.PIPE,
                stdout=stdout,
                stderr=stderr,
                preexec_fn=give_fd_3,
                close_fds=False,
                start_new_session=True,
            )
        os.close(write_fd)
        self.messages: List[dict] = []
        #: Called with each `handover` message instead of returning it (the parent's relay to the
        #: judge: `Evaluation.relay_handovers`); None: `handover` is returned like any message. A
        #: candidate worker tested alone has no judge: its outputs are let go unjudged.
        self.on_handover: Optional[Callable[[dict], None]] = (
            (lambda message: self.send({"type": "handover-done"})) if role == "candidate" else None
        )
        self._closed = False
        self._queue: "queue.Queue[Optional[dict]]" = queue.Queue()
        self._reader = threading.Thread(target=self._read, args=(read_fd,), daemon=True)
        self._reader.start()

    def _read(self, fd: int) -> None:
        with os.fdopen(fd, "rb") as pipe:
            for line in pipe:
                self._queue.put(json.loads(line))
        self._queue.put(None)

    def send(self, message: dict) -> None:
        self.process.stdin.write((json.dumps({"v": 1, **message}) + "\n").encode())
        self.process.stdin.flush()

    def close_stdin(self) -> None:
        if not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass

    def next_message(self, timeout: float = MESSAGE_TIMEOUT_SECONDS) -> Optional[dict]:
        """The next message, or None once fd 3 is closed (every later call returns None too)."""
        while True:
            if self._closed:
                return None
            message = self._queue.get(timeout=timeout)
            if message is None:
                self._closed = True
                return None
            self.messages.append(message)
            if message["type"] == "handover" and self.on_handover is not None:
                self.on_handover(message)
                continue
            return message

    def read_until(self, *types: str, timeout: float = MESSAGE_TIMEOUT_SECONDS) -> Optional[dict]:
        """Messages up to the first of `types` or `failure`; that message, or None at EOF."""
        while True:
            message = self.next_message(timeout)
            if message is None or message["type"] in types or message["type"] == "failure":
                return message

    def finish(self, timeout: float = 60) -> int:
        self.close_stdin()
        code = self.process.wait(timeout=timeout)
        while self.next_message(timeout=timeout) is not None:
            pass
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, 9)
            self.process.wait()

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace")

    def of_type(self, kind: str) -> List[dict]:
        return [message for message in self.messages if message["type"] == kind]

    def stages(self) -> List[tuple]:
        return [(message["stage"], message["status"]) for message in self.of_type("stage")]


#: The guard the worker's own protocol tests run under: their candidates are plain PyTorch programs
#: (they test the protocol, not the guard), so static findings are notes and no kernel of their own
#: is required; every other run-time check still runs. The adversarial suite passes `guard=None`
#: (the worker's default policy) or its own.
PYTORCH = {"policy": "pytorch"}
#: The `permissive` policy, for tests about it: static findings are notes, PyTorch compute beside an
#: own kernel is reported, and a candidate whose own kernel did not run is still rejected.
PERMISSIVE = {"policy": "permissive"}


@dataclass
class Evaluation:
    reference: Worker
    candidate: Worker
    ready: Optional[dict] = None
    baseline: Optional[dict] = None
    correctness: Optional[dict] = None
    judgement: Optional[dict] = None
    generalisation_judgement: Optional[dict] = None
    timing: Optional[dict] = None
    batches: List[Batch] = field(default_factory=list)
    kept_calls: List[int] = field(default_factory=list)
    #: A break of the timing protocol by the candidate (the parent's `timing-tampered`), or None.
    violation: Optional[str] = None
    #: Eager re-timed in the reference worker right after the candidate's timing (`anchor`).
    anchor: Optional[dict] = None
    timed_judgement: Optional[dict] = None
    failures: Dict[str, dict] = field(default_factory=dict)
    exit_codes: Dict[str, int] = field(default_factory=dict)
    #: Each handed-over output's trial, by hand-over id, as the judge gave it at the hand-over.
    handed: Dict[str, dict] = field(default_factory=dict)
    degenerate: bool = False
    atol: float = 1e-2
    rtol: float = 1e-2

    def message(self, role: str, kind: str) -> Optional[dict]:
        """The first message of `kind` that `role` wrote, or None."""
        found = getattr(self, role).of_type(kind)
        return found[0] if found else None

    def relay_handovers(self) -> None:
        """Relays the candidate's hand-overs to the judge as the parent does: `judge` with the
        output, `handover-send` when the judge is ready for the pipe, `handover-done` after the
        judgement (docs/worker-protocol.md, "The output hand-over")."""
        self.candidate.on_handover = self._relay

    def _relay(self, message: dict) -> None:
        output = message["output"]
        self.reference.send({"type": "judge", "atol": self.atol, "rtol": self.rtol, "outputs": [output]})
        while True:
            reply = self.reference.next_message()
            if reply is None or reply["type"] == "failure":
                break
            if reply["type"] == "handover-ready":
                transport = {"transport": reply["transport"]} if reply.get("transport") else {}
                self.candidate.send({"type": "handover-send", **transport})
            elif reply["type"] == "judgement":
                self.handed[output["id"]] = reply["trials"][0]
                self.degenerate = self.degenerate or bool(reply.get("degenerate"))
                break
        try:
            self.candidate.send({"type": "handover-done"})
        except BrokenPipeError:
            pass

    def judged(self, listed: List[dict]) -> dict:
        """The judgement of the listed outputs from their hand-overs (a listed output that was
        never handed over is `missing-output`, as the parent makes it)."""
        trials = [
            self.handed.get(entry.get("id"))
            or {"seed": entry.get("seed"), "passed": False, "check": "missing-output", "message": "never handed over"}
            for entry in listed
        ]
        passed = bool(trials) and all(trial["passed"] for trial in trials)
        return {"v": 1, "type": "judgement", "passed": passed, "trials": trials, "degenerate": self.degenerate}


def reference_request(
    problem: Path,
    *,
    backend="cpu",
    precision="fp32",
    preset="cpu",
    device="cpu",
    correctness_seeds=(11, 12),
    timing_seeds=(21, 22),
    baselines=None,
    guard=PYTORCH,
    atol=None,
    rtol=None,
    ceilings=None,
    generalisation_seeds=None,
    declared_tolerance=None,
    dtype_tolerances=None,
    overrides=None,
) -> dict:
    request = {
        "type": "reference",
        "problem": str(problem),
        "backend": backend,
        "precision": precision,
        "preset": preset,
        "device": device,
        "correctness_seeds": list(correctness_seeds),
        "timing_seeds": list(timing_seeds),
        "baselines": baselines,
    }
    optional = {
        "guard": guard,
        "atol": atol,
        "rtol": rtol,
        "ceilings": ceilings,
        "generalisation_seeds": None if generalisation_seeds is None else list(generalisation_seeds),
        "declared_tolerance": declared_tolerance,
        "dtype_tolerances": dtype_tolerances,
        "overrides": overrides,
    }
    request.update({key: value for key, value in optional.items() if value is not None})
    return request


def candidate_request(
    problem: Path,
    candidate: Path,
    scratch: Path,
    build_dir: Path,
    *,
    backend="cpu",
    precision="fp32",
    preset="cpu",
    device="cpu",
    correctness_seeds=(11, 12),
    timing_seeds=(21, 22),
    perf_trials=6,
    warmup_trials=2,
    guard=PYTORCH,
    generalisation_seeds=None,
    cross_check=False,
    warmup_ms=None,
    overrides=None,
) -> dict:
    request = {
        "type": "candidate",
        "problem": str(problem),
        "candidate": str(candidate),
        "backend": backend,
        "precision": precision,
        "preset": preset,
        "device": device,
        "correctness_seeds": list(correctness_seeds),
        "timing_seeds": list(timing_seeds),
        "perf_trials": perf_trials,
        "warmup_trials": warmup_trials,
        "handover_pipe": str(handover_pipe(scratch)),
        "build_dir": str(build_dir),
    }
    if overrides is not None:
        request["overrides"] = overrides
    if cross_check:
        request["cross_check"] = True
    if warmup_ms is not None:
        request["warmup_ms"] = warmup_ms
    if guard is not None:
        request["guard"] = guard
    if generalisation_seeds is not None:
        request["generalisation_seeds"] = list(generalisation_seeds)
    return request


def handover_pipe(scratch: Path) -> Path:
    """Where the judge makes the hand-over pipe: the scratch's `in` folder (read-only to the candidate)."""
    (scratch / "in").mkdir(parents=True, exist_ok=True)
    return scratch / "in" / "handover"


def handover_socket(scratch: Path) -> Path:
    """Where the candidate's launcher binds the hand-over socket (beside the pipe)."""
    (scratch / "in").mkdir(parents=True, exist_ok=True)
    return scratch / "in" / "handover.sock"


SHARED_SETTINGS = (
    "overrides",
    "backend",
    "precision",
    "preset",
    "device",
    "correctness_seeds",
    "timing_seeds",
    "guard",
    "generalisation_seeds",
)


def evaluate(
    problem: Path,
    candidate_file: Path,
    work: Path,
    build_dir: Path,
    *,
    atol=1e-2,
    rtol=1e-2,
    run_timing=True,
    baselines=None,
    ceilings=None,
    candidate_env: Optional[Dict[str, str]] = None,
    launcher=None,
    candidate_command: Optional[List[str]] = None,
    sample_calls=(1, 4),
    batch_calls=None,
    warmup_calls=None,
    declared_tolerance=None,
    dtype_tolerances=None,
    **settings,
) -> Evaluation:
    """Drives both roles as the parent would: reference and candidate side by side, then the judge
    (correctness outputs, then generalisation outputs when there are any), then (when asked) the
    timed calls (timing_driver.py: the parent keeps `sample_calls`' outputs, decided after each call,
    and runs trusted batches of `batch_calls` calls; `warmup_calls` warm-up calls, as a parent
    pacing a warm-up by time asks for, default `warmup_trials`) and the judging of the kept outputs of the
    timed calls and the batches. `declared_tolerance` and `dtype_tolerances` go into the reference
    request, and the tolerance `reference-ready` reports is then the judge's, as the parent does
    (src/eval/run/evaluation-settings.ts, withReportedTolerance). `candidate_env` adds variables to
    the candidate worker's environment (KFORGE_GUARD_RUNTIME for bench/guard/run.py).
    `launcher(role, cwd)` gives a role's command line and whole environment instead (the sandbox:
    sandbox_support.py). `candidate_command` replaces the candidate's command line alone (the
    walk's profiler, test_worker_walk.py)."""
    shared = {key: settings[key] for key in SHARED_SETTINGS if key in settings}
    if launcher is None:
        reference = Worker("reference", work / "reference")
        # What the launcher does for a sandboxed candidate: the hand-over listener, inherited.
        listener = listen(str(handover_socket(work / "scratch")))
        os.set_inheritable(listener.fileno(), True)
        inherited = {LISTENER_VARIABLE: str(listener.fileno())}
        candidate = Worker(
            "candidate", work / "scratch", env={**(candidate_env or {}), **inherited}, command=candidate_command
        )
        listener.close()
    else:
        command, environment = launcher("reference", work / "reference")
        reference = Worker("reference", work / "reference", command=command, base_env=environment)
        command, environment = launcher("candidate", work / "scratch")
        candidate = Worker("candidate", work / "scratch", env=candidate_env, command=command, base_env=environment)
    result = Evaluation(reference=reference, candidate=candidate, atol=atol, rtol=rtol)
    result.relay_handovers()
    try:
        request = reference_request(
            problem,
            baselines=baselines,
            atol=atol,
            rtol=rtol,
            ceilings=ceilings,
            declared_tolerance=declared_tolerance,
            dtype_tolerances=dtype_tolerances,
            **shared,
        )
        reference.send(
            {
                **request,
                "handover_pipe": str(handover_pipe(work / "scratch")),
                "handover_socket": str(handover_socket(work / "scratch")),
            }
        )
        candidate.send(candidate_request(problem, candidate_file, work / "scratch", build_dir, **settings))
        result.ready = reference.read_until("reference-ready")
        chosen = (result.ready or {}).get("tolerance")
        if chosen:
            result.atol, result.rtol = chosen["atol"], chosen["rtol"]
        if baselines is not None and _is(result.ready, "reference-ready"):
            result.baseline = reference.read_until("baseline")
        result.correctness = candidate.read_until("correctness-outputs")
        for role, message in (("reference", result.ready), ("candidate", result.correctness)):
            if _is(message, "failure"):
                result.failures[role] = message
        if _is(result.ready, "reference-ready") and _is(result.correctness, "correctness-outputs"):
            result.judgement = result.judged(result.correctness["outputs"])
            extra = [entry for entry in result.correctness.get("generalisation", []) if entry["id"]]
            if extra:
                result.generalisation_judgement = result.judged(extra)
            if run_timing:
                driven = drive_timing(
                    candidate,
                    reference,
                    warmup_trials=settings.get("warmup_trials", 2),
                    warmup_calls=warmup_calls,
                    perf_trials=settings.get("perf_trials", 6),
                    sample_calls=sample_calls,
                    batch_calls=batch_calls,
                    models=len(settings.get("timing_seeds", (21, 22))),
                    call_bytes=_call_bytes(reference),
                )
                result.timing, result.batches, result.kept_calls = driven.timing, driven.batches, driven.kept
                result.violation = driven.violation
                if result.violation is not None:
                    candidate.kill()
                elif _is(result.timing, "failure"):
                    result.failures["candidate"] = result.timing
                elif _is(result.timing, "timing"):
                    reference.send({"type": "anchor", "perf_trials": 30, "warmup_trials": 3, "budget_ms": 3000})
                    result.anchor = reference.read_until("anchor")
                    kept = result.timing["samples"] + [sample for batch in result.batches for sample in batch.samples]
                    if kept:
                        result.timed_judgement = result.judged(kept)
            else:
                candidate.send({"type": "stop"})
        result.exit_codes = {"reference": reference.finish(), "candidate": candidate.finish()}
    finally:
        reference.kill()
        candidate.kill()
    return result


def _call_bytes(reference: "Worker") -> Optional[int]:
    """A call's input and output bytes from the reference's `roofline` (None when it has none)."""
    for roofline in reference.of_type("roofline"):
        inputs, outputs = roofline.get("input_bytes"), roofline.get("output_bytes")
        if isinstance(inputs, int) and isinstance(outputs, int):
            return inputs + outputs
    return None


def _is(message: Optional[dict], kind: str) -> bool:
    return message is not None and message["type"] == kind
