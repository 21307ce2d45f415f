"""Native sources (C++/CUDA strings handed to load_inline): ATen compute, vendor libraries, side
streams, global state, precision, sandbox and threads.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Mapping

from .compute_names import COMPUTE_FUNCTIONS, COMPUTE_TENSOR_METHODS
from .names import _RUN_PRECISIONS
from .native_patterns import (
    _CPP_COMPUTE_NAMESPACES,
    _CPP_CONTEXT_SETTER,
    _CPP_GLOBAL_NOTES,
    _CPP_GLOBAL_REJECT,
    _CPP_GLUE,
    _CPP_HIDDEN_NAMESPACES,
    _CPP_JOIN,
    _CPP_L2_PERSIST,
    _CPP_LOW_PRECISION,
    _CPP_MATH_MODES,
    _CPP_METHOD_CALL,
    _CPP_PYBIND_NAME,
    _CPP_QUALIFIED_CALL,
    _CPP_SIDE_STREAM,
    _CPP_TYPE_DOWNGRADE,
    _LIBRARY_NAMES,
    _VENDOR_PATTERNS,
)
from .native_sandbox import _NativeSandboxRules
from .native_sources import _NativeSource
from .report import _Report, _at, _line, measured_precision_note


class _NativeScanner(_NativeSandboxRules):
    """Scans one native source: ATen compute, vendor libraries, side streams, global state and
    precision here, what it reaches outside its kernel in native_sandbox.py."""

    def __init__(self, report: _Report, policy: Mapping[str, Any], precision: str):
        self.report = report
        self.policy = policy
        self.precision = precision
        self.fp32 = _RUN_PRECISIONS.get(precision, "float32") == "float32"
        self.libraries_seen: set[str] = set()

    def flags(self, call: ast.Call, keyword: str, text: str) -> None:
        line, at = _line(call), _at(call)
        if "default-stream" in text and "per-thread" in text:
            self.report.add(
                "side-stream",
                f"load_inline{at} compiles with a per-thread default stream: kernels "
                f"then run off PyTorch's current stream, so the dynamic check "
                f"decides whether the timing holds",
                line,
                "note",
            )
        if self.fp32 and re.search(r"(?:^|\s)-{1,2}(?:use_fast_math|ffast-math)\b", text):
            self.report.add(
                "precision",
                measured_precision_note(
                    f"load_inline{at} compiles with fast math ({keyword}), whose approximate exp/div/sqrt "
                    f"lower float32 accuracy,",
                    self.precision,
                ),
                line,
                "note",
            )

    def scan(self, source: _NativeSource) -> None:
        code, commentless = source.code, source.without_comments
        self._aten(source, code)
        self._vendors(source, code)
        self._streams(source, code)
        self._global_state(source, code)
        self._precision(source, code)
        self._sandbox(source, code, commentless)
        self._threads_and_timers(source, code, commentless)

    def _add(
        self,
        check: str,
        source: _NativeSource,
        offset: int,
        message: str,
        severity: str = "reject",
        confined: bool = False,
    ) -> None:
        line = source.line(offset)
        at = f" (line {line})" if line is not None else ""
        self.report.add(check, message.replace("{at}", at), line, severity, confined=confined)

    def _aten(self, source: _NativeSource, code: str) -> None:
        """ATen compute called from C++ is evidence, not a verdict: the run-time trace sees the operator
        and the policy decides (reported under kernelbench, rejected under own-kernels and strict).
        A call that goes past the dispatcher (`at::native::`, `at::meta::`, `at::compositeexplicitautograd::`)
        cannot be seen at run time, so it is rejected here under every enforcing policy."""
        name_of_policy = self.policy["name"]
        note = (
            f": ATen compute inside the extension; under the policy `{name_of_policy}` the operators that "
            f"run decide (reported under kernelbench, rejected under own-kernels and strict)"
        )
        for match in _CPP_QUALIFIED_CALL.finditer(code):
            root = match.group(1)
            chain = [part.strip() for part in match.group(2).split("::") if part.strip()]
            name, namespaces = chain[-1], chain[:-1]
            spelled = f"{root}::{'::'.join(chain)}"
            if root == "c10" or "blas" in namespaces:
                continue
            hidden = bool(namespaces) and namespaces[0] in _CPP_HIDDEN_NAMESPACES
            compute = (
                (namespaces and namespaces[0] in _CPP_COMPUTE_NAMESPACES)
                or name in COMPUTE_FUNCTIONS
                or (not namespaces and name.startswith("_") and not name.startswith("__"))
            )
            if hidden:
                self._add(
                    "library-policy",
                    source,
                    match.start(),
                    f"the C++ source calls {spelled}{{at}} directly, past PyTorch's dispatcher, where the "
                    f"run-time trace cannot see what it computes: call the operator through at:: (then "
                    f"it is reported or rejected per the policy) or compute it in your own kernel",
                )
            elif compute:
                self._add(
                    "library-policy", source, match.start(), f"the C++ source calls {spelled}{{at}}{note}", "note"
                )
            elif not namespaces and name[:1].islower() and name not in _CPP_GLUE and name != "set_num_threads":
                self._add(
                    "library-policy",
                    source,
                    match.start(),
                    f"the C++ source calls {spelled}{{at}}, which the guard does not know; if it is an "
                    f"ATen compute op, the run-time trace reports it",
                    "note",
                )
        for match in _CPP_METHOD_CALL.finditer(code):
            name = match.group(1)
            if name in COMPUTE_TENSOR_METHODS and not name.startswith("__"):
                self._add(
                    "library-policy",
                    source,
                    match.start(1),
                    f"the C++ source calls the tensor method .{name}(){{at}}{note}",
                    "note",
                )

    def _vendors(self, source: _NativeSource, code: str) -> None:
        allowed = self.policy["vendor_libraries"]
        for library, display, pattern in _VENDOR_PATTERNS:
            match = re.search(pattern, code)
            if match is None or library in self.libraries_seen:
                continue
            self.libraries_seen.add(library)
            spelled = match.group(0).rstrip("( ").strip()
            if library in allowed:
                self._add(
                    "library-policy",
                    source,
                    match.start(),
                    f"the C++ source uses {display} ({spelled}){{at}}, which the policy "
                    f"`{self.policy['name']}` allows",
                    "note",
                )
            else:
                allowed_text = (
                    "allows no vendor libraries"
                    if not allowed
                    else "allows only " + ", ".join(_LIBRARY_NAMES[item] for item in allowed)
                )
                self._add(
                    "library-policy",
                    source,
                    match.start(),
                    f"the C++ source calls {display} ({spelled}){{at}}: the policy "
                    f"`{self.policy['name']}` {allowed_text}; write the kernel yourself",
                )

    def _streams(self, source: _NativeSource, code: str) -> None:
        match = _CPP_SIDE_STREAM.search(code)
        if match:
            joined = _CPP_JOIN.search(code)
            tail = "; it is joined back" if joined else "; nothing joins it back to the current stream"
            self._add(
                "side-stream",
                source,
                match.start(),
                f"the C++ source uses a non-default CUDA stream ({match.group(0).rstrip('( ')}){{at}}{tail}: "
                f"work left on a side stream escapes the timer, so the dynamic check compares event time "
                f"with wall time",
                "note",
            )

    def _global_state(self, source: _NativeSource, code: str) -> None:
        match = _CPP_L2_PERSIST.search(code)
        if match:
            self._add(
                "global-state",
                source,
                match.start(),
                f"the C++ source sets up persisting L2 cache ({match.group(0)}){{at}}: before timing the "
                f"worker sets the persisting L2 limit to 0 (no line can persist through a window) and "
                f"resets the stream's window, and a limit changed afterwards is rejected (`global-state`)",
                "note",
            )
        for match in _CPP_CONTEXT_SETTER.finditer(code):
            setter = match.group(1)
            if any(word in setter for word in ("TF32", "Float32MatmulPrecision", "ReductionCuBLAS")):
                self._add(
                    "precision",
                    source,
                    match.start(),
                    f"the C++ source calls globalContext().{setter}(){{at}}: judged at run time (the worker "
                    f"compares torch's precision switches, which this one sets, before and after the import, "
                    f"the construction, the correctness trials and the timed calls, and rejects a change)",
                    "note",
                )
            else:
                self._add(
                    "global-state",
                    source,
                    match.start(),
                    f"the C++ source calls globalContext().{setter}(){{at}}: global torch state changes "
                    f"are not part of a kernel and skew the comparison; remove it",
                )
        for match in _CPP_GLOBAL_REJECT.finditer(code):
            self._add(
                "global-state",
                source,
                match.start(),
                f"the C++ source calls {match.group(0).rstrip('( ')}{{at}}: it changes state the harness "
                f"and the baseline share; remove it",
            )
        for match in _CPP_GLOBAL_NOTES.finditer(code):
            self._add(
                "global-state",
                source,
                match.start(),
                f"the C++ source calls {match.group(0).rstrip('( ')}{{at}}, a process-wide setting",
                "note",
            )

    def _precision(self, source: _NativeSource, code: str) -> None:
        if not self.fp32:
            return
        for pattern, what in (
            (_CPP_TYPE_DOWNGRADE, "casts a tensor to lower precision"),
            (_CPP_LOW_PRECISION, "uses half/bfloat16/TF32 arithmetic"),
            (_CPP_MATH_MODES, "uses a reduced-precision math mode"),
        ):
            match = pattern.search(code)
            if match:
                found = match.group(0).strip()
                self._add(
                    "precision",
                    source,
                    match.start(),
                    measured_precision_note(f"the C++ source {what} ({found}){{at}}", self.precision),
                    "note",
                )

    def kernel_names(self, source: _NativeSource) -> set[str]:
        return set(_CPP_PYBIND_NAME.findall(source.without_comments))
