"""The candidate role's run-time guard: the dynamic checks around every call of the candidate.

One `GuardRuntime` per candidate process. It snapshots torch's global state before the candidate
runs and compares it later (`global-state`, `precision`); around each forward call it poisons the
allocator (`stale-output`), watches threads and checks the output's leaves (`deferred-work`), and
on cuda reads the runtime's last error after the synchronize (`device-error`); before timing it
clears persisting-L2 state (`l2-persist`); around one untimed correctness call it records the
ATen operators dispatched (`torch-fallback`, dispatch_trace.py and torch_fallback.py), the calls of
the candidate's extension functions (build/extension_calls.py), on cpu which tensors hold PyTorch's own
computation (provenance.py) and, through the profiler, the GPU kernels launched and the operators
of other threads (`own-kernel`, kernel_trace.py and own_kernel.py; other threads' operators join
`torch-fallback`); from that record it sends the call's `attribution` (attribution.py) and judges
whether the candidate's own code did the work (own_work.py). Each check is recorded in `log` for
the `guard-checks` message; a failed check raises StageFailure.
docs/guard.md describes every check.

`enabled=False` (KFORGE_GUARD_RUNTIME=off, guard_settings.py: for measuring the guard's cost, never
for verdicts) turns every method into a no-op and records one `guard-runtime` note instead.
"""

from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence

import torch

from . import global_state
from ..device.cudart import CudaRuntime
from ..protocol.errors import StageFailure, failures_as
from .deferred_work import ThreadWatch, output_problems, tensor_leaves
from .dispatch_ops import glue_operators
from .poison import is_stale, poison_allocator, poison_sizes
from .policy import load_policy
from .stage_checks import StageChecks
from .traced_call import OUTPUT_CONTEXT, TracedCallChecks

PREWARM_ELEMENTS = 1 << 20
GUARD_OFF = (
    "the run-time checks were off (KFORGE_GUARD_RUNTIME=off, a benchmark switch): nothing was "
    "checked at run time, so this run's verdict is not to be trusted"
)


class GuardLog:
    """Outcomes of the dynamic checks: {check, status (passed | skipped | note), message}."""

    def __init__(self) -> None:
        self.entries: Dict[str, dict] = {}

    def record(self, check: str, status: str, message: str) -> None:
        previous = self.entries.get(check)
        if previous is not None and previous["status"] != "passed" and status == "passed":
            return
        self.entries[check] = {"check": check, "status": status, "message": message}

    def take(self) -> List[dict]:
        entries = list(self.entries.values())
        self.entries = {}
        return entries


def prewarm_torch(device: torch.device) -> None:
    """Starts torch's own thread pools before the candidate runs (so they are not counted as its
    threads): a parallel elementwise op, a matrix product, and on cuda a kernel and a cuBLAS call."""
    with torch.no_grad():
        values = torch.ones(PREWARM_ELEMENTS)
        values.add_(1.0)
        torch.mm(torch.ones(64, 64), torch.ones(64, 64))
        if device.type == "cuda":
            on_device = torch.ones(64, 64, device=device)
            torch.mm(on_device, on_device)
            torch.cuda.synchronize(device)


class GuardRuntime(TracedCallChecks, StageChecks):
    def __init__(
        self,
        device: torch.device,
        policy: Optional[Mapping[str, Any]] = None,
        enabled: bool = True,
        closures: Iterable[Callable] = (),
        timer_targets: Sequence[tuple] = (),
    ):
        """`closures` and `timer_targets`: what the stages' ends watch (stage_checks.py)."""
        self._init_stage_checks(closures, timer_targets)
        self.device = device
        self.is_cuda = device.type == "cuda"
        self.enabled = enabled
        self.policy = dict(policy) if policy is not None else load_policy()
        self.glue = glue_operators(self.policy)
        self.cudart: Optional[CudaRuntime] = CudaRuntime.discover() if self.is_cuda and enabled else None
        self.threads = ThreadWatch()
        self.log = GuardLog()
        self.output_sizes: List[int] = []
        self.state: Dict[str, Any] = {}
        self.checked_outputs = 0
        self._init_traced_call()

    # --- global state ----------------------------------------------------------------------

    def _l2_reader(self):
        return self.cudart.persisting_l2_limit if self.cudart is not None and self.cudart.available else None

    def snapshot_state(self) -> None:
        """Called before the candidate's module runs."""
        if not self.enabled:
            return
        prewarm_torch(self.device)
        if self.cudart is not None:
            self.cudart.take_last_errors()  # whatever torch's start-up left is not the candidate's
        self.state = global_state.snapshot(self._l2_reader())
        if self.is_cuda and global_state.PERSISTING_L2 not in self.state:
            self.log.record(
                "global-state",
                "note",
                "the persisting-L2 limit is not compared: libcudart " f"could not be used ({self.cudart.describe()})",
            )

    def refresh_runtime(self) -> None:
        """Re-reads which libcudart copies are mapped (the candidate's extension may bring one)."""
        if self.is_cuda and self.enabled:
            self.cudart = CudaRuntime.discover()

    def check_state(self, when: str) -> None:
        if not self.enabled:
            return
        found = global_state.changes(self.state, global_state.snapshot(self._l2_reader()))
        if found:
            check = global_state.first_check(found)
            raise StageFailure(
                "rejected",
                check,
                f"{when} changed torch's global state: " + "; ".join(change.describe() for change in found),
            )
        self.log.record("global-state", "passed", f"{len(self.state)} global flags unchanged")
        self.log.record("precision", "passed", "precision switches unchanged")

    def reset_persisting_l2(self) -> None:
        """Before timing on cuda: limit 0, persisting lines reset, no access window on the stream."""
        if not self.enabled:
            return
        if not self.is_cuda:
            self.log.record("l2-persist", "skipped", "the cpu backend has no persisting L2")
            return
        self.check_device_errors("before timing")
        if self.cudart is None or not self.cudart.available:
            self.log.record("l2-persist", "skipped", "no libcudart could be loaded; persisting L2 not reset")
            return
        stream = torch.cuda.current_stream(self.device).cuda_stream
        problems = self.cudart.reset_persisting_l2(stream)
        if problems:
            self.log.record("l2-persist", "note", "; ".join(problems))
        else:
            self.log.record(
                "l2-persist", "passed", "persisting-L2 limit set to 0 and the stream's access window cleared"
            )
        limit = self.cudart.persisting_l2_limit()
        if limit is not None:
            self.state[global_state.PERSISTING_L2] = limit

    # --- around each call --------------------------------------------------------------------

    def check_device_errors(self, when: str) -> None:
        if self.cudart is None or not self.cudart.available:
            return
        errors = self.cudart.take_last_errors()
        if errors:
            named = ", ".join(f"{name} ({code})" for code, name in errors)
            raise StageFailure("runtime_error", "device-error", f"the device reported {named} {when}")

    def before_call(self, inputs: Any) -> None:
        """Poisons the allocator with blocks the size of the last outputs and of the inputs, starts
        the thread watch and clears the runtime's last error."""
        if not self.enabled:
            return
        sizes = sorted(set(self.output_sizes) | set(poison_sizes(inputs, self.device)), reverse=True)
        poison_allocator(sizes, self.device)
        self.threads.before_call()
        self.check_device_errors("before the candidate's call (left by earlier work)")

    def after_call(self, output: Any, where: str) -> None:
        """The checks on one call's output, after its closing synchronize."""
        if not self.enabled:
            return
        self.check_device_errors(f"after {where}")
        problems = output_problems(output)
        if problems:
            raise StageFailure("rejected", "deferred-work", f"{where}: {problems[0]}")
        leaves = list(tensor_leaves(output))
        with failures_as(**OUTPUT_CONTEXT):
            for index, leaf in enumerate(leaves):
                fraction = is_stale(leaf)
                if fraction is not None:
                    name = "the output" if len(leaves) == 1 else f"output leaf {index}"
                    raise StageFailure(
                        "rejected",
                        "stale-output",
                        (
                            f"{where}: {name} still holds the poison written into freed memory before the call in "
                            f"{fraction:.0%} of its words (it was never written)"
                        ),
                    )
        thread_problem = self.threads.after_call(output)
        if thread_problem:
            raise StageFailure("rejected", "deferred-work", f"{where}: {thread_problem}")
        self.output_sizes = poison_sizes(leaves, self.device)
        self.checked_outputs += 1

    def record_call_checks(self) -> None:
        if not self.enabled:
            self.log.record("guard-runtime", "note", GUARD_OFF)
            return
        count, self.checked_outputs = self.checked_outputs, 0
        where = "cpu: glibc reuses freed blocks up to 32 MiB" if not self.is_cuda else "cuda caching allocator"
        self.log.record("stale-output", "passed", f"{count} outputs free of the poison ({where})")
        started = self.threads.first_call_threads
        self.log.record(
            "deferred-work",
            "note" if started else "passed",
            (
                f"{count} outputs plain tensors with storage; no threads left running"
                + (
                    f"; the first call started Python thread(s) {', '.join(started)}, counted in the baseline"
                    if started
                    else ""
                )
                + (
                    f"; {self.threads.worker_threads} OS thread(s) the profiler started are counted in the baseline"
                    if self.threads.worker_threads
                    else ""
                )
            ),
        )
        if self.is_cuda:
            status = "passed" if self.cudart is not None and self.cudart.available else "note"
            detail = (
                f"synchronize and cudaGetLastError after each call ({self.cudart.describe()})"
                if status == "passed"
                else "synchronize only: no libcudart could be loaded for cudaGetLastError"
            )
            self.log.record("device-error", status, detail)
