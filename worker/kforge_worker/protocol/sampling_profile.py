"""A sampling profile of a worker role, for people timing the worker (`KFORGE_WORKER_PROFILE=DIR`).

A daemon thread reads the main thread's stack every `interval` seconds (`sys._current_frames`), so
time spent blocked in C (a device synchronize, a file read, a lock) is seen where it happens, and
nothing is installed in the interpreter's profiling hooks (which torch's own profiler and tracers
take over). Each sample is counted under the stage running at that moment (`stages.stage` calls
`enter`/`leave`). At the end of the role, two files land in DIR:

- `<role>-<pid>.stacks`: collapsed stacks (`stage;outer;…;inner COUNT`), the input of flame-graph
  tools;
- `<role>-<pid>.summary.txt`: per stage, its wall time and the functions holding most samples
  (inclusive), each with its share of that stage.

Both are rewritten at the end of every stage as well as at the end of the role, because the parent
may end the worker's process group soon after its last message.

With `memory` (KFORGE_WORKER_PROFILE_MEMORY=1) on a GPU with torch 2.x, the CUDA caching allocator
records its history (every allocation and free with its Python stack) from the first stage on, and
`<role>-<pid>-<NN>-<stage>.pickle` is written at the end of each stage: a snapshot that
https://pytorch.org/memory_viz shows as the tensors alive over time, which names whatever holds the
device memory a stage's peak counts.

Off by default: nothing runs unless the variable names a directory.
"""

import os
import sys
import tempfile
import threading
import time
from collections import Counter
from typing import Dict, List, Optional, Tuple

OUTSIDE = "(outside a stage)"
_active: Optional["Sampler"] = None
#: The folder of the worker's temporary folder that takes the profile when the one asked for cannot
#: be written; the parent copies it out (PROFILE_FALLBACK, src/eval/process/scratch-directory.ts).
PROFILE_FALLBACK = "kforge-profile"


def _frame_name(code, line: int) -> str:
    return f"{os.path.basename(code.co_filename)}:{code.co_name}:{line}"


class Sampler:
    def __init__(
        self, interval: float = 0.005, directory: Optional[str] = None, role: str = "worker", memory: bool = False
    ):
        self.interval = interval
        self.directory = directory
        self.role = role
        self.memory = memory
        self.memory_recording = False
        self.snapshots = 0
        self.main = threading.main_thread().ident
        self.stage = OUTSIDE
        self.samples: Counter = Counter()
        self.stage_walls: List[Tuple[str, float]] = []
        self._stage_started = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kforge-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            frame = sys._current_frames().get(self.main)
            names = []
            leaf = True
            while frame is not None:
                names.append(_frame_name(frame.f_code, frame.f_lineno if leaf else frame.f_code.co_firstlineno))
                leaf = False
                frame = frame.f_back
            self.samples[(self.stage, ";".join(reversed(names)))] += 1

    def enter(self, name: str) -> None:
        self.stage = name
        self._stage_started = time.perf_counter()
        if self.memory and not self.memory_recording:
            # At the first stage, not at start: by then the role has set up its device.
            self.memory_recording = _record_memory_history()

    def leave(self) -> None:
        self.stage_walls.append((self.stage, time.perf_counter() - self._stage_started))
        if self.memory_recording and self.directory is not None:
            self.snapshots += 1
            _dump_memory_snapshot(
                os.path.join(self.directory, f"{self.role}-{os.getpid()}-{self.snapshots:02d}-{self.stage}.pickle")
            )
        self.stage = OUTSIDE
        # Written at every stage's end too: the parent may end the process group soon after the
        # role's last message, before the role returns.
        if self.directory is not None:
            self.write()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1)

    def write(self) -> None:
        """Writes the stacks and the summary into the sampler's directory (nothing without one)."""
        if self.directory is None:
            return
        os.makedirs(self.directory, exist_ok=True)
        base = os.path.join(self.directory, f"{self.role}-{os.getpid()}")
        with open(base + ".stacks", "w") as stacks:
            for (stage, stack), count in sorted(list(self.samples.items())):
                stacks.write(f"{stage};{stack} {count}\n")
        with open(base + ".summary.txt", "w") as summary:
            summary.write(self.summary())

    def summary(self, top: int = 30) -> str:
        by_stage: Dict[str, Counter] = {}
        totals: Counter = Counter()
        for (stage, stack), count in list(self.samples.items()):
            totals[stage] += count
            inclusive = by_stage.setdefault(stage, Counter())
            for frame in set(name.rsplit(":", 1)[0] for name in stack.split(";")):
                inclusive[frame] += count
        lines = [f"sampling every {self.interval * 1e3:.1f} ms; stages in order, wall time as the stage measured it"]
        lines += [f"  {stage}: {seconds:.3f} s" for stage, seconds in self.stage_walls]
        for stage, total in totals.most_common():
            lines.append("")
            lines.append(f"== {stage}: {total} samples (~{total * self.interval:.2f} s)")
            for frame, count in by_stage[stage].most_common(top):
                lines.append(f"{100 * count / total:6.1f}%  {count:6d}  {frame}")
        return "\n".join(lines) + "\n"


def _record_memory_history() -> bool:
    """Starts the CUDA allocator's history where torch and the device have it; whether it started."""
    try:
        import torch

        if not torch.cuda.is_available() or not hasattr(torch.cuda.memory, "_record_memory_history"):
            return False
        # Python stacks only: they name the code that allocated; C++ frames would be symbolised at
        # every snapshot, inside the stage.
        torch.cuda.memory._record_memory_history(stacks="python", max_entries=1_000_000)
        return True
    except Exception as error:  # a diagnostic: never a fault of the evaluation
        print(f"kforge_worker: the CUDA memory history could not be recorded: {error}", file=sys.stderr)
        return False


def _dump_memory_snapshot(path: str) -> None:
    try:
        import torch

        os.makedirs(os.path.dirname(path), exist_ok=True)
        torch.cuda.memory._dump_snapshot(path)
    except Exception as error:  # a diagnostic: never a fault of the evaluation
        print(f"kforge_worker: the CUDA memory snapshot {path} could not be written: {error}", file=sys.stderr)


def writable_directory(directory: str) -> str:
    """`directory` when a file can be made in it, else PROFILE_FALLBACK in this process's temporary
    folder (inside the sandbox: the evaluation's scratch folder, whose parent copies it out)."""
    try:
        os.makedirs(directory, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".kforge-probe-"):
            pass
        return directory
    except OSError:
        fallback = os.path.join(tempfile.gettempdir(), PROFILE_FALLBACK)
        os.makedirs(fallback, exist_ok=True)
        return fallback


def start(
    directory: Optional[str] = None, role: str = "worker", interval: float = 0.005, memory: bool = False
) -> Sampler:
    global _active
    _active = Sampler(interval, directory, role, memory)
    _active.start()
    return _active


def enter(name: str) -> None:
    if _active is not None:
        _active.enter(name)


def leave() -> None:
    if _active is not None:
        _active.leave()
