"""The run-time guard's judgement of the traced correctness call (a part of GuardRuntime, guard_runtime.py).

The first correctness trial runs through `forward(..., traced=True)`: under the dispatch trace
(dispatch_trace.py) inside the profiler (kernel_trace.py), with the candidate's extension calls
recorded (build/extension_calls.py) and, on cpu, the provenance of its tensors (provenance.py). After the
output's own checks, `check_dispatch` sends the call's `attribution` (attribution.py) and applies
`torch-fallback` and the own-work rules (own_work.py); `check_own_kernel` applies `own-kernel`
(own_kernel.py on a CUDA device, own_work.py on cpu). docs/guard.md, "What ran". What the policy
rejects is a PolicyRejection (policy_rejection.py), judged after the call's output; a hidden trace
is a plain rejection.
"""

import time
from typing import Any, Callable, Iterable, List, Mapping, Optional

import torch

from . import attribution, own_kernel, own_work
from ..backends.registry import jit_kernel_names
from .candidate_kernels import OwnKernelSources
from ..protocol.errors import StageFailure, failures_as
from .deferred_work import tensor_leaves
from .dispatch_ops import OWN
from .dispatch_trace import DispatchRecorder, traced_call
from ..build.extension_calls import ExtensionCalls
from .kernel_names import OwnKernels
from .kernel_trace import KernelTrace, profiled_call
from .policy import load_policy
from .policy_rejection import PYTORCH_BESIDE_KERNELS, PolicyRejection, own_work_waived, pytorch_allowed
from .provenance import Provenance
from .forbidden_names import CHECK, ForbiddenNames
from .torch_fallback import Finding, judge

OUTPUT_CONTEXT = dict(kind="runtime_error", check="forward", context="reading the candidate's output failed")


class TracedCallChecks:
    """The traced call's recording and judgement; GuardRuntime provides `device`, `is_cuda`,
    `enabled`, `policy`, `glue`, `threads`, `log` and the attributes set in `_init_traced_call`."""

    def _init_traced_call(self) -> None:
        self.trace: Optional[DispatchRecorder] = None
        self.kernels: Optional[KernelTrace] = None
        self.own_sources: OwnKernelSources = OwnKernelSources(
            unknown="the guard was not told which kernels the " "candidate built"
        )
        self.extensions: Optional[ExtensionCalls] = None
        self.static_findings: List[dict] = []
        self.send: Optional[Callable[..., None]] = None
        self.wall_ns = 0
        self._custom_operators: List[Any] = []
        self._traced = False
        #: The problem's forbidden names (forbidden_names.py); its operators are judged here.
        self.forbidden = ForbiddenNames()

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
        return OwnKernels.of(sources.built, jit_kernel_names(sources.module_name))

    def _attribution(self, trace: DispatchRecorder, working: List[str]) -> attribution.Attribution:
        """`working`: the operators that did work (the dispatch finding's `compute`)."""
        counts = trace.counts()
        if not self.is_cuda:
            names = frozenset(working)
            return attribution.cpu(
                counts, self.extensions, self.wall_ns, trace.dispatch_ns, trace.extension_dispatch_ns, names
            )
        kernels = self.kernels
        if kernels is None or kernels.kernels is None:
            reason = kernels.kernels_unavailable if kernels is not None else "the profiler did not run"
            return attribution.unavailable("device", f"the profiler listed no kernels: {reason}")
        traced = frozenset(entry.name.split(".")[0] for entry in counts)
        names = frozenset(name.split(".")[0] for name in working)
        return attribution.device(kernels.launches, self._own_kernels().owns, traced, kernels.unlinked_us, names)

    def check_dispatch(self, output: Any, where: str) -> None:
        """After `after_call` on a traced call: sends the call's attribution, then rejects a fallback
        that ran, PyTorch doing the work (per the policy and own_work.py) or a tampered trace, else
        records the `torch-fallback` outcome."""
        trace, self.trace = self.trace, None
        if trace is None:
            return
        self._traced = False
        if trace.unavailable is not None:
            self._send_attribution(
                attribution.unavailable(
                    "device" if self.is_cuda else "host", (f"forward's operators were not traced: {trace.unavailable}")
                ),
                where,
            )
            self.log.record(
                "torch-fallback",
                "skipped",
                f"{where}: forward's operators were not traced: " f"{trace.unavailable}; the static check stands alone",
            )
            return
        if trace.tampered:
            self._send_attribution(attribution.unavailable("device" if self.is_cuda else "host", trace.tampered), where)
            raise StageFailure(
                "rejected",
                "torch-fallback",
                (f"{where}: {trace.tampered}; a candidate may not hide its PyTorch calls from the guard"),
            )
        self._traced = True
        other = (self.kernels.other_threads if self.kernels is not None else None) or []
        dispatched = self.forbidden.dispatched((entry.name, entry.count) for entry in [*trace.counts(), *other])
        if dispatched:
            raise StageFailure(
                "rejected",
                CHECK,
                f"{where}: the problem forbids {', '.join(dispatched)} (its problem.yaml `forbidden`)",
            )
        self._custom_operators = [entry for entry in trace.counts() if entry.kind == OWN]
        with failures_as(**OUTPUT_CONTEXT):
            elements = sum(leaf.numel() for leaf in tensor_leaves(output))
        findings = [judge(trace.counts(), self.policy, elements, where), self._other_threads(elements, where)]
        self._send_attribution(self._attribution(trace, findings[0].compute), where)
        if trace.errors:
            findings[0].message += f" ({trace.errors} operator call(s) could not be measured)"
        noted = []  # own-work notes of `torch-fallback`, kept in its one entry (a policy such as `pytorch`)
        for outcome in self._own_work(trace, output, findings, where, self.policy):
            if outcome.status == "reject":
                raise PolicyRejection(outcome.check, outcome.message)
            if outcome.check == "torch-fallback":
                noted.append(outcome.message)
            else:
                self.log.record(outcome.check, outcome.status, outcome.message)
        for finding in findings:
            if finding.status == "reject":
                measured = (
                    pytorch_allowed() if self._own_work_done(trace, output, findings, where) else own_work_waived()
                )
                raise PolicyRejection("torch-fallback", f"{finding.message} ({measured})")
        status = "note" if noted or any(finding.status == "note" for finding in findings) else "passed"
        self.log.record("torch-fallback", status, "; ".join([finding.message for finding in findings] + noted))

    def _own_work(
        self, trace: DispatchRecorder, output: Any, findings: List[Finding], where: str, policy: Mapping[str, Any]
    ) -> List[own_work.Outcome]:
        """The outcomes of own_work.py's rules for this call under `policy`, in the order they are judged."""
        extensions = self.extensions
        failed = extensions.failed_builds if extensions is not None else []
        fallbacks = [finding for finding in self.static_findings if finding.get("check") == "silent-fallback"]
        outcomes = [own_work.fallback_raised(extensions, policy, where)]
        if not self.is_cuda:
            producers = None
            if trace.provenance is not None:
                try:
                    producers = trace.provenance.output_is_torch(output)
                except Exception:
                    producers = None
            outcomes.append(own_work.pytorch_output(producers, policy, where, fallbacks, failed))
            native = (extensions is not None and bool(extensions.modules)) or bool(self._custom_operators)
            if not native:
                computed = [name for finding in findings for name in finding.compute]
                outcomes.append(own_work.no_native_code(computed, policy, where, fallbacks, failed))
        return [outcome for outcome in outcomes if outcome is not None]

    def _own_work_done(self, trace: DispatchRecorder, output: Any, findings: List[Finding], where: str) -> bool:
        """Whether the candidate's own code did the work, as a policy that requires it but allows
        PyTorch beside it (`kernelbench`) would judge this call: then that policy would measure a
        candidate rejected for PyTorch compute alone, else only `pytorch` would. Unknown (the
        profiler listed no kernels) counts as done."""
        beside = load_policy(PYTORCH_BESIDE_KERNELS)
        if any(outcome.status == "reject" for outcome in self._own_work(trace, output, findings, where, beside)):
            return False
        if not self.is_cuda:
            return own_work.cpu_kernel_ran(self.extensions, self._custom_operators, beside, where).status != "reject"
        kernels = self.kernels
        if kernels is None:
            return True
        own = self._own_kernels()
        found = own_kernel.verdict(
            kernels.kernels, kernels.kernels_unavailable, own, self.own_sources.unknown, beside, where, kernels.copies
        )
        return found.status != "reject"

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
        of the candidate's own, else records the `own-kernel` outcome. On a CUDA device: the
        profiler's kernels (own_kernel.py); cpu: the extension's functions and custom operators that
        ran (own_work.py)."""
        kernels, self.kernels = self.kernels, None
        if kernels is None:
            return
        if not self.is_cuda:
            self._check_cpu_kernel(kernels, where)
            return
        sources = self.own_sources
        finding = own_kernel.verdict(
            kernels.kernels,
            kernels.kernels_unavailable,
            self._own_kernels(),
            sources.unknown,
            self.policy,
            where,
            kernels.copies,
        )
        if finding.status == "reject":
            raise PolicyRejection(own_kernel.CHECK, finding.message)
        self.log.record(own_kernel.CHECK, finding.status, finding.message)

    def _check_cpu_kernel(self, kernels: KernelTrace, where: str) -> None:
        threads = (
            "; the profiler saw every other thread's operators"
            if kernels.other_threads is not None
            else f"; operators on other threads are not traced ({kernels.threads_unavailable})"
        )
        returned = self.extensions.returned() if self.extensions is not None else []
        if not self._traced and not returned:
            self.log.record(
                "own-kernel",
                "skipped",
                f"{where}: whether the candidate's own code ran was not "
                f"checked: forward's operators were not traced{threads}",
            )
            return
        outcome = own_work.cpu_kernel_ran(self.extensions, self._custom_operators, self.policy, where)
        if outcome.status == "reject":
            raise PolicyRejection(outcome.check, outcome.message)
        self.log.record(outcome.check, outcome.status, outcome.message + threads)
