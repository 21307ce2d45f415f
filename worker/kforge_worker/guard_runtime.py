"""The candidate role's run-time guard: the dynamic checks around every call of the candidate.

One `GuardRuntime` per candidate process. It snapshots torch's global state before the candidate
runs and compares it later (`global-state`, `precision`); around each forward call it poisons the
allocator (`stale-output`), watches threads and checks the output's leaves (`deferred-work`), and
on cuda reads the runtime's last error after the synchronize (`device-error`); before timing it
clears persisting-L2 state (`l2-persist`); around one untimed correctness call it records the
ATen operators dispatched (`torch-fallback`, dispatch_trace.py and torch_fallback.py), the calls of
the candidate's extension functions (extension_calls.py), on cpu which tensors hold PyTorch's own
computation (provenance.py) and, through the profiler, the GPU kernels launched and the operators
of other threads (`own-kernel`, kernel_trace.py and own_kernel.py; other threads' operators join
`torch-fallback`); from that record it sends the call's `attribution` (attribution.py) and judges
whether the candidate's own code did the work (own_work.py). Each check is recorded in `log` for
the `guard-checks` message; a failed check raises StageFailure.
docs/guard.md describes every check.

`enabled=False` (KFORGE_GUARD_RUNTIME=off, guard_settings.py: for measuring the guard's cost, never
for verdicts) turns every method into a no-op and records one `guard-runtime` note instead.
"""

import time
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional

import torch

from . import attribution, global_state, own_kernel, own_work
from .candidate_kernels import OwnKernelSources, triton_kernel_names
from .cudart import CudaRuntime
from .deferred_work import ThreadWatch, output_problems, tensor_leaves
from .dispatch_ops import OWN, glue_operators
from .dispatch_trace import DispatchRecorder, traced_call
from .extension_calls import ExtensionCalls
from .errors import StageFailure, failures_as
from .kernel_names import OwnKernels
from .kernel_trace import KernelTrace, profiled_call
from .poison import is_stale, poison_allocator, poison_sizes
from .policy import load_policy
from .provenance import Provenance
from .torch_fallback import Finding, judge

PREWARM_ELEMENTS = 1 << 20
OUTPUT_CONTEXT = dict(kind="runtime_error", check="forward", context="reading the candidate's output failed")
UNTOLD = OwnKernelSources(unknown="the guard was not told which kernels the candidate built")
GUARD_OFF = ("the run-time checks were off (KFORGE_GUARD_RUNTIME=off, a benchmark switch): nothing was "
             "checked at run time, so this run's verdict is not to be trusted")


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


class GuardRuntime:
    def __init__(self, device: torch.device, policy: Optional[Mapping[str, Any]] = None, enabled: bool = True):
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
        self.trace: Optional[DispatchRecorder] = None
        self.kernels: Optional[KernelTrace] = None
        self.own_sources: OwnKernelSources = UNTOLD
        self.extensions: Optional[ExtensionCalls] = None
        self.static_findings: List[dict] = []
        self.send: Optional[Callable[..., None]] = None
        self.wall_ns = 0
        self._custom_operators: List[Any] = []
        self._traced = False

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
            self.log.record("global-state", "note", "the persisting-L2 limit is not compared: libcudart "
                                                    f"could not be used ({self.cudart.describe()})")

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
            raise StageFailure("rejected", check, f"{when} changed torch's global state: "
                               + "; ".join(change.describe() for change in found))
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
            self.log.record("l2-persist", "passed",
                            "persisting-L2 limit set to 0 and the stream's access window cleared")
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
                    raise StageFailure("rejected", "stale-output", (
                        f"{where}: {name} still holds the poison written into freed memory before the call in "
                        f"{fraction:.0%} of its words (it was never written)"))
        thread_problem = self.threads.after_call(output)
        if thread_problem:
            raise StageFailure("rejected", "deferred-work", f"{where}: {thread_problem}")
        self.output_sizes = poison_sizes(leaves, self.device)
        self.checked_outputs += 1

    # --- torch-fallback: the dispatch trace of one untimed call ------------------------------

    def expect_own_kernels(self, sources: OwnKernelSources) -> None:
        """What the candidate built (candidate_kernels.py), for `own-kernel`; after the build."""
        self.own_sources = sources

    def watch_extensions(self, extensions: ExtensionCalls, static_findings: Iterable[dict] = ()) -> None:
        """The candidate's extension calls (build.py wrapped its modules) and the static guard's
        findings (a fallback it names labels the run-time rejection); after the build."""
        self.extensions = extensions
        self.static_findings = list(static_findings)

    def forward(self, call: Callable[[], Any], traced: bool, sources: Iterable[Any] = ()) -> Any:
        """`call()`; when `traced`, under the dispatch trace (where it works on this torch) inside
        the profiler (where there is something for it to record: kernel_trace.py), with the
        extension's calls recorded and, on cpu, the provenance of tensors from `sources` (the
        call's inputs, the model's parameters and buffers)."""
        if not traced or not self.enabled:
            return call()
        extensions = self.extensions
        provenance = None
        if not self.is_cuda:
            try:
                provenance = Provenance([value for value in sources if isinstance(value, torch.Tensor)])
            except Exception:  # the record is evidence, never a fault of the candidate's call
                provenance = None

        def dispatch_traced() -> Any:
            if extensions is not None:
                extensions.start()
            started = time.perf_counter_ns()
            try:
                output, self.trace = traced_call(call, self.glue, extensions, provenance)
            finally:
                self.wall_ns = time.perf_counter_ns() - started
                if extensions is not None:
                    extensions.stop()
            return output

        output, self.kernels = profiled_call(dispatch_traced, self.device, self.glue)
        self.threads.allow(self.kernels.profiler_threads)
        return output

    def _send_attribution(self, result: attribution.Attribution, where: str) -> None:
        if self.send is not None:
            self.send("attribution", where=where, **result.message())

    def _own_kernels(self) -> OwnKernels:
        sources = self.own_sources
        return OwnKernels.of(sources.cuda, triton_kernel_names(sources.module_name))

    def _attribution(self, trace: DispatchRecorder) -> attribution.Attribution:
        if not self.is_cuda:
            return attribution.cpu(trace.counts(), self.extensions, self.wall_ns, trace.dispatch_ns,
                                   trace.extension_dispatch_ns)
        kernels = self.kernels
        if kernels is None or kernels.kernels is None:
            reason = kernels.kernels_unavailable if kernels is not None else "the profiler did not run"
            return attribution.unavailable("device", f"the profiler listed no kernels: {reason}")
        traced = frozenset(entry.name.split(".")[0] for entry in trace.counts())
        return attribution.device(kernels.launches, self._own_kernels().owns, traced, kernels.unlinked_us)

    def check_dispatch(self, output: Any, where: str) -> None:
        """After `after_call` on a traced call: sends the call's attribution, then rejects a fallback
        that ran, PyTorch doing the work (per the policy and own_work.py) or a tampered trace, else
        records the `torch-fallback` outcome."""
        trace, self.trace = self.trace, None
        if trace is None:
            return
        self._traced = False
        if trace.unavailable is not None:
            self._send_attribution(attribution.unavailable("device" if self.is_cuda else "host", (
                f"forward's operators were not traced: {trace.unavailable}")), where)
            self.log.record("torch-fallback", "skipped", f"{where}: forward's operators were not traced: "
                                                         f"{trace.unavailable}; the static check stands alone")
            return
        if trace.tampered:
            self._send_attribution(attribution.unavailable("device" if self.is_cuda else "host",
                                                           trace.tampered), where)
            raise StageFailure("rejected", "torch-fallback", (
                f"{where}: {trace.tampered}; a candidate may not hide its PyTorch calls from the guard"))
        self._traced = True
        self._custom_operators = [entry for entry in trace.counts() if entry.kind == OWN]
        with failures_as(**OUTPUT_CONTEXT):
            elements = sum(leaf.numel() for leaf in tensor_leaves(output))
        self._send_attribution(self._attribution(trace), where)
        findings = [judge(trace.counts(), self.policy, elements, where), self._other_threads(elements, where)]
        if trace.errors:
            findings[0].message += f" ({trace.errors} operator call(s) could not be measured)"
        for outcome in self._own_work(trace, output, findings, where):
            if outcome.status == "reject":
                raise StageFailure("rejected", outcome.check, outcome.message)
            self.log.record(outcome.check, outcome.status, outcome.message)
        for finding in findings:
            if finding.status == "reject":
                raise StageFailure("rejected", "torch-fallback", finding.message)
        status = "note" if any(finding.status == "note" for finding in findings) else "passed"
        self.log.record("torch-fallback", status, "; ".join(finding.message for finding in findings))

    def _own_work(self, trace: DispatchRecorder, output: Any, findings: List[Finding],
                  where: str) -> List[own_work.Outcome]:
        """The outcomes of own_work.py's rules for this call, in the order they are judged."""
        extensions = self.extensions
        failed = extensions.failed_builds if extensions is not None else []
        fallbacks = [finding for finding in self.static_findings if finding.get("check") == "silent-fallback"]
        outcomes = [own_work.fallback_raised(extensions, self.policy, where)]
        if not self.is_cuda:
            producers = None
            if trace.provenance is not None:
                try:
                    producers = trace.provenance.output_is_torch(output)
                except Exception:
                    producers = None
            outcomes.append(own_work.pytorch_output(producers, self.policy, where, fallbacks, failed))
            native = (extensions is not None and bool(extensions.modules)) or bool(self._custom_operators)
            if not native:
                work = [name for finding in findings for name in finding.compute]
                outcomes.append(own_work.no_native_code(work, self.policy, where, fallbacks, failed))
        return [outcome for outcome in outcomes if outcome is not None]

    def _other_threads(self, elements: int, where: str) -> Finding:
        """The judgement of the operators the profiler saw on threads other than forward's."""
        kernels = self.kernels
        if kernels is None or kernels.other_threads is None:
            reason = kernels.threads_unavailable if kernels is not None else "the profiler did not run"
            return Finding("passed", f"operators on other threads not traced: {reason}")
        if not kernels.other_threads:
            return Finding("passed", "no operator dispatched on any other thread")
        return judge(kernels.other_threads, self.policy, elements, f"{where}, on another thread")

    # --- own-kernel: the kernels the profiler saw in the same call -----------------------------

    def check_own_kernel(self, where: str) -> None:
        """After `check_dispatch` on a traced call: rejects (per the policy) a call that ran no kernel
        of the candidate's own, else records the `own-kernel` outcome. cuda and triton: the
        profiler's kernels (own_kernel.py); cpu: the extension's functions and custom operators that
        ran (own_work.py)."""
        kernels, self.kernels = self.kernels, None
        if kernels is None:
            return
        if not self.is_cuda:
            self._check_cpu_kernel(kernels, where)
            return
        sources = self.own_sources
        finding = own_kernel.verdict(kernels.kernels, kernels.kernels_unavailable, self._own_kernels(),
                                     sources.unknown, self.policy, where, kernels.copies)
        if finding.status == "reject":
            raise StageFailure("rejected", own_kernel.CHECK, finding.message)
        self.log.record(own_kernel.CHECK, finding.status, finding.message)

    def _check_cpu_kernel(self, kernels: KernelTrace, where: str) -> None:
        threads = ("; the profiler saw every other thread's operators" if kernels.other_threads is not None
                   else f"; operators on other threads are not traced ({kernels.threads_unavailable})")
        returned = self.extensions.returned() if self.extensions is not None else []
        if not self._traced and not returned:
            self.log.record("own-kernel", "skipped", f"{where}: whether the candidate's own code ran was not "
                                                     f"checked: forward's operators were not traced{threads}")
            return
        outcome = own_work.cpu_kernel_ran(self.extensions, self._custom_operators, self.policy, where)
        if outcome.status == "reject":
            raise StageFailure("rejected", outcome.check, outcome.message)
        self.log.record(outcome.check, outcome.status, outcome.message + threads)

    def record_call_checks(self) -> None:
        if not self.enabled:
            self.log.record("guard-runtime", "note", GUARD_OFF)
            return
        count, self.checked_outputs = self.checked_outputs, 0
        where = "cpu: glibc reuses freed blocks up to 32 MiB" if not self.is_cuda else "cuda caching allocator"
        self.log.record("stale-output", "passed", f"{count} outputs free of the poison ({where})")
        started = self.threads.first_call_threads
        self.log.record("deferred-work", "note" if started else "passed", (
            f"{count} outputs plain tensors with storage; no threads left running"
            + (f"; the first call started Python thread(s) {', '.join(started)}, counted in the baseline"
               if started else "")
            + (f"; {self.threads.worker_threads} OS thread(s) the profiler started are counted in the baseline"
               if self.threads.worker_threads else "")))
        if self.is_cuda:
            status = "passed" if self.cudart is not None and self.cudart.available else "note"
            detail = (f"synchronize and cudaGetLastError after each call ({self.cudart.describe()})"
                      if status == "passed" else "synchronize only: no libcudart could be loaded for cudaGetLastError")
            self.log.record("device-error", status, detail)
