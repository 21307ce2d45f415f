"""The `deferred-work` check (docs/hacks.md #4): outputs that are real tensors, and no threads left behind.

An output leaf must be exactly a `torch.Tensor` (or an `nn.Parameter`, which torch itself
returns): a subclass can compute when it is first read (`__torch_function__`), after the timer
stopped. It must have real storage: not on the meta device, and a storage whose bytes cover
`numel * element_size` (a stride-0 `expand` of a few values is not a computed output).

Threads: `ThreadWatch` counts the process's OS threads (`/proc/self/task`) and its Python threads
(`threading.enumerate()`). The first (warm) call may start pools that stay (torch's intra-op
OpenMP and interop pools, CUDA driver threads, a compiler's workers): what runs after it is the
baseline, reported by name. After that, no call may leave a Python thread running that was not
there before it, nor more OS threads than the baseline.

A helper thread that forward started and joined can still be listed in `/proc/self/task` for a
moment: `join()` returns once the thread's Python code is done, before its OS thread has exited.
So an OS thread count above the baseline is looked at again for up to SETTLE_SECONDS. The output's
digest is taken before that wait and after it, and an output that changed meanwhile is deferred
work: a thread that finishes the answer after the call returned gains nothing from the wait.
"""

import os
import threading
import time
from typing import Any, Iterator, List, Optional

import torch

from .input_digest import input_digest

PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)
TASK_DIR = "/proc/self/task"
#: How long OS threads above the baseline get to finish exiting (a joined thread's last moments).
SETTLE_SECONDS = 0.25


def tensor_leaves(value: Any, depth: int = 0) -> Iterator[Any]:
    """Tensor-like leaves of an output (tuples, lists, dict values), including subclasses."""
    if depth > 32:
        return
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from tensor_leaves(item, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from tensor_leaves(item, depth + 1)


def storage_bytes(tensor: torch.Tensor) -> Optional[int]:
    """Bytes of the tensor's storage, or None where this torch cannot say."""
    try:
        if hasattr(tensor, "untyped_storage"):
            return int(tensor.untyped_storage().nbytes())
        return int(tensor.storage().nbytes())
    except (RuntimeError, NotImplementedError, AttributeError):
        return None


def leaf_problem(leaf: Any, name: str) -> Optional[str]:
    """Why an output leaf is not a plain, materialised tensor; None when it is."""
    if type(leaf) not in PLAIN_TYPES:
        return f"{name} is a {type(leaf).__name__}, a torch.Tensor subclass: the output must be a plain torch.Tensor"
    if leaf.device.type == "meta":
        return f"{name} is on the meta device (it has no data)"
    if leaf.layout != torch.strided:
        return None
    needed = leaf.numel() * leaf.element_size()
    held = storage_bytes(leaf)
    if held is not None and held < needed:
        return (
            f"{name} has {leaf.numel()} elements of {leaf.element_size()} bytes but its storage holds "
            f"{held} bytes (a stride-0 view, not a computed output)"
        )
    return None


def output_problems(output: Any) -> List[str]:
    """Every leaf problem of an output, in leaf order."""
    leaves = list(tensor_leaves(output))
    problems = []
    for index, leaf in enumerate(leaves):
        problem = leaf_problem(leaf, "the output" if len(leaves) == 1 else f"output leaf {index}")
        if problem:
            problems.append(problem)
    return problems


def os_thread_count() -> Optional[int]:
    try:
        return len(os.listdir(TASK_DIR))
    except OSError:
        return None


class ThreadWatch:
    """Thread counts around forward calls; `after_call` returns a problem or None."""

    def __init__(self) -> None:
        self.baseline: Optional[int] = None
        self.first_call_threads: List[str] = []
        self.worker_threads = 0
        self._python_before: set = set()
        self._watching = False

    def before_call(self) -> None:
        self._python_before = {thread.ident for thread in threading.enumerate()}

    def allow(self, os_threads: int) -> None:
        """Adds OS threads the worker itself started during a call (the profiler's) to the baseline."""
        if self.baseline is not None and os_threads > 0:
            self.baseline += os_threads
            self.worker_threads += os_threads

    def after_call(self, output: Any = None) -> Optional[str]:
        """A problem with the threads after a call (None: none); `output` is the call's output,
        whose digest must not change while extra OS threads are given time to exit."""
        started = [
            thread for thread in threading.enumerate() if thread.ident not in self._python_before and thread.is_alive()
        ]
        count = os_thread_count()
        if not self._watching:
            self._watching = True
            self.baseline = count
            self.first_call_threads = sorted(thread.name for thread in started)
            return None
        if started:
            names = ", ".join(sorted(thread.name for thread in started))
            return f"the forward call left {len(started)} Python thread(s) running ({names})"
        if count is None or self.baseline is None or count <= self.baseline:
            return None
        before = _digest(output)
        deadline = time.monotonic() + SETTLE_SECONDS
        while count is not None and count > self.baseline and time.monotonic() < deadline:
            time.sleep(0.002)
            count = os_thread_count()
        if _digest(output) != before:
            return (
                "the output changed after the call returned, while a thread the candidate started was "
                "still running (work finished behind the caller's back)"
            )
        if count is not None and count > self.baseline:
            return (
                f"the process has {count} OS threads after the call, {self.baseline} after the first call "
                f"(work left running on a thread the candidate started)"
            )
        return None


def _digest(output: Any) -> str:
    """SHA-256 of an output's tensor leaves (a cuda tensor by its device digest): input_digest's."""
    return input_digest(list(tensor_leaves(output)))
