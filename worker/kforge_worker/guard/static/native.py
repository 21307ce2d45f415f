"""Native sources (C++/CUDA strings handed to load_inline): ATen compute, vendor libraries, side
streams, global state, precision, sandbox and threads.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from .compute_names import COMPUTE_FUNCTIONS, COMPUTE_TENSOR_METHODS
from .names import _RUN_PRECISIONS
from .report import _Report, _at, _line, measured_precision_note
from .symbols import _Module, _Segments, _call_argument, _join_segments, _line_at, _qualname, _resolve_text


# ---------------------------------------------------------------------------------------------
# Native sources (C++/CUDA strings handed to load_inline)
# ---------------------------------------------------------------------------------------------

_NATIVE_MARKERS = (
    "#include",
    "__global__",
    "__device__",
    "PYBIND11_MODULE",
    "TORCH_LIBRARY",
    "torch::Tensor",
    "at::Tensor",
    'extern "C"',
)

#: (policy id, display name, call pattern)
_VENDOR_PATTERNS: tuple[tuple[str, str, str], ...] = (
    ("cublaslt", "cuBLASLt", r"\bcublasLt\w*\s*\(|getCurrentCUDABlasLtHandle"),
    ("cublas", "cuBLAS", r"\bcublas(?!Lt)\w*\s*\(|\bat\s*::\s*cuda\s*::\s*blas\s*::|getCurrentCUDABlasHandle"),
    ("cudnn", "cuDNN", r"\bcudnn\w*\s*\(|\bcudnn_frontend\s*::"),
    ("cutlass", "CUTLASS", r"\bcutlass\s*::|\bcute\s*::"),
    ("cub", "CUB", r"\bcub\s*::"),
    ("thrust", "Thrust", r"\bthrust\s*::"),
    ("cufft", "cuFFT", r"\bcufft\w*\s*\("),
    ("curand", "cuRAND", r"\bcurand\w*\s*\("),
    ("cusparse", "cuSPARSE", r"\bcusparse\w*\s*\(|getCurrentCUDASparseHandle"),
    ("cusolver", "cuSOLVER", r"\bcusolver\w*\s*\(|getCurrentCUDASolverDnHandle"),
    ("nccl", "NCCL", r"\bnccl\w*\s*\("),
    ("cpu-blas", "a CPU BLAS (MKL/OpenBLAS)", r"\bcblas_\w+\s*\(|\bmkl_\w+\s*\(|\b[sdcz]gemm_\s*\("),
    ("onednn", "oneDNN", r"\bdnnl\s*::|\bdnnl_\w+\s*\(|\bideep\s*::"),
    ("eigen", "Eigen", r"\bEigen\s*::"),
)
_LIBRARY_NAMES = {library: display for library, display, _ in _VENDOR_PATTERNS}

_CPP_GLUE = frozenset(
    """
empty empty_like empty_strided zeros zeros_like ones ones_like full full_like from_blob arange tensor
scalar_tensor dtype device layout requires_grad get_num_threads parallel_for parallel_reduce
get_thread_num init_num_threads in_parallel_region globalContext elementSize toString
typeMetaToScalarType scalarTypeToTypeMeta isFloatingType isIntegralType isComplexType
get_default_dtype device_of getCurrentCUDAStream getDefaultCUDAStream getCurrentDeviceProperties
getDeviceProperties current_device device_count set_device warp_size check_size_nonnegative
""".split()
)
_CPP_COMPUTE_NAMESPACES = frozenset(
    {
        "native",
        "_ops",
        "nn",
        "fft",
        "linalg",
        "special",
        "sparse",
        "nested",
        "functional",
        "mps",
        "meta",
        "compositeexplicitautograd",
        "compositeimplicitautograd",
        "compositeexplicitautogradnonfunctional",
    }
)
#: Namespaces whose functions run an ATen kernel directly, past the dispatcher (and so past the trace).
_CPP_HIDDEN_NAMESPACES = frozenset(
    {
        "native",
        "meta",
        "compositeexplicitautograd",
        "compositeimplicitautograd",
        "compositeexplicitautogradnonfunctional",
    }
)
_CPP_QUALIFIED_CALL = re.compile(r"\b(at|torch|c10)((?:\s*::\s*[A-Za-z_]\w*)+)\s*(?:<[^;(){}<>]*>)?\s*\(")
_CPP_METHOD_CALL = re.compile(r"[\w\)\]]\s*(?:\.|->)\s*([A-Za-z_]\w*)\s*\(")
_CPP_INCLUDE = re.compile(r"#\s*include\s*[<\"]([^>\"]+)[>\"]")
_CPP_PYBIND_NAME = re.compile(r"\.\s*def\s*\(\s*\"([A-Za-z_]\w*)")

_CPP_SIDE_STREAM = re.compile(
    r"\bcudaStreamCreate\w*\s*\(|getStreamFromPool\s*\(|\bcudaStreamPerThread\b|"
    r"\bcudaStreamNonBlocking\b|\bcuStreamCreate\w*\s*\("
)
_CPP_JOIN = re.compile(
    r"\bcudaStreamWaitEvent\s*\(|\bcudaStreamSynchronize\s*\(|\bcudaDeviceSynchronize\s*\(|"
    r"\bcudaEventSynchronize\s*\(|\.\s*synchronize\s*\(|wait_stream|\bcuStreamWaitEvent\s*\("
)
_CPP_L2_PERSIST = re.compile(
    r"\bcudaLimitPersistingL2CacheSize\b|\bcudaStreamAttributeAccessPolicyWindow\b|"
    r"\baccessPolicyWindow\b|\bcudaAccessPropertyPersisting\b|"
    r"\bcudaLaunchAttributeAccessPolicyWindow\b|\bcudaKernelNodeAttributeAccessPolicyWindow\b|"
    r"\bCU_LIMIT_PERSISTING_L2_CACHE_SIZE\b"
)
_CPP_CONTEXT_SETTER = re.compile(r"\bglobalContext\s*\(\s*\)\s*\.\s*(set\w+)\s*\(")
_CPP_GLOBAL_NOTES = re.compile(
    r"\bomp_set_num_threads\s*\(|\bcudaDeviceSetLimit\s*\(|\bcudaDeviceSetCacheConfig\s*\(|"
    r"\bcudaDeviceSetSharedMemConfig\s*\(|\bcudaSetDevice\s*\(|\bcudaDeviceSetMemPool\s*\(|"
    r"\bcudaMemPoolSetAttribute\s*\("
)
_CPP_GLOBAL_REJECT = re.compile(
    r"\bcudaDeviceReset\s*\(|\b(?:at|torch)\s*::\s*set_num_threads\s*\(|" r"\bcudaCtxResetPersistingL2Cache\b(?!\s*\()"
)
_CPP_TYPE_DOWNGRADE = re.compile(
    r"\.\s*to\s*\(\s*(?:torch|at|c10)\s*::\s*k(?:Half|BFloat16|Float8\w*)\b|"
    r"\.\s*(?:half|bfloat16)\s*\(\s*\)|toType\s*\(\s*(?:torch|at|c10)\s*::\s*k(?:Half|BFloat16)"
)
_CPP_LOW_PRECISION = re.compile(
    r"__float2half\w*|__floats2half2\w*|__float22half2\w*|__float2bfloat16\w*|"
    r"__floats2bfloat162\w*|__nv_fp8\w*|__nv_cvt_float\w*_to_fp8\w*|\bwmma\s*::|"
    r"\bmma\.sync\b|\bwgmma\b|__float_to_tf32|\bcvt\.rna\.tf32|\bnvcuda::wmma"
)
_CPP_MATH_MODES = re.compile(
    r"\bCUBLAS_TF32_TENSOR_OP_MATH\b|\bCUBLAS_COMPUTE_32F_FAST_\w+|\bCUBLAS_COMPUTE_16F\b|"
    r"\bCUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION\b|\bCUBLAS_TENSOR_OP_MATH\b|"
    r"\bCUBLASLT_\w*FAST\w*"
)
_CPP_SANDBOX = re.compile(
    r"(?<![\w:.>])(?:std\s*::\s*)?(system|popen|fork|vfork|execv\w*|execl\w*|socket|"
    r"getenv|secure_getenv|setenv|putenv|kill|ptrace)\s*\("
)
_CPP_FILE_WRITE = re.compile(r"\bstd\s*::\s*ofstream\b|\bfopen\s*\(|\bcreat\s*\(")
_CPP_HARNESS = re.compile(
    r"\bprocess_vm_readv\s*\(|\bprocess_vm_writev\s*\(|/proc/self/mem|/proc/\d+/mem|" r"/proc/self/maps"
)
_CPP_PYTHON = re.compile(
    r"\bpy(?:bind11)?\s*::\s*module_?\s*::\s*import\s*\(|\bPyImport_\w+\s*\(|\bPyRun_\w+\s*\(|"
    r"\bPyEval_\w+\s*\(|\bpy(?:bind11)?\s*::\s*(?:eval|exec)\w*\s*[<(]|\.\s*attr\s*\(|"
    r"\bPyObject_GetAttrString\s*\(|\bPyObject_Call\w*\s*\("
)
_CPP_THREAD = re.compile(r"\bstd\s*::\s*(?:thread|jthread|async)\b|\bpthread_create\s*\(")
_CPP_DETACH = re.compile(r"\.\s*detach\s*\(\s*\)|\bpthread_detach\s*\(|std\s*::\s*launch\s*::\s*async")
_CPP_INTERPOSE = re.compile(
    r"\b(?:cudaError_t|CUresult|int|void|float)\s+(cudaEventElapsedTime|cudaEventRecord|"
    r"cudaEventSynchronize|cudaDeviceSynchronize|cudaStreamSynchronize|clock_gettime|"
    r"gettimeofday|cuEventElapsedTime|cudaEventQuery)\s*\([^;{}]*\)\s*\{|"
    r"\bdlsym\s*\(\s*RTLD_NEXT|LD_PRELOAD"
)


def _strip_cpp(text: str, strings: bool) -> str:
    """Blank comments (and string/char literal contents when ``strings``), keeping offsets and newlines."""
    out = list(text)
    index, length = 0, len(text)

    def blank(start: int, end: int) -> None:
        for position in range(start, min(end, length)):
            if out[position] != "\n":
                out[position] = " "

    while index < length:
        char = text[index]
        following = text[index + 1] if index + 1 < length else ""
        if char == "/" and following == "/":
            end = text.find("\n", index)
            end = length if end < 0 else end
            blank(index, end)
            index = end
        elif char == "/" and following == "*":
            end = text.find("*/", index + 2)
            end = length if end < 0 else end + 2
            blank(index, end)
            index = end
        elif char in "\"'":
            previous = text[index - 1] if index else ""
            if char == "'" and previous.isalnum() and following.isalnum():
                index += 1  # digit separator (1'000)
                continue
            end = index + 1
            while end < length and text[end] != char and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            if strings:
                blank(index + 1, end)
            index = end + 1
        else:
            index += 1
    return "".join(out)


@dataclass
class _NativeSource:
    segments: _Segments
    text: str = ""
    starts: list[tuple[int, int | None]] = field(default_factory=list)
    without_comments: str = ""
    code: str = ""

    def __post_init__(self) -> None:
        self.text, self.starts = _join_segments(self.segments)
        self.without_comments = _strip_cpp(self.text, strings=False)
        self.code = _strip_cpp(self.text, strings=True)

    def line(self, offset: int) -> int | None:
        return _line_at(self.starts, self.text, offset)


def _native_sources(module: _Module) -> tuple[list[_NativeSource], list[tuple[ast.Call, str, str]]]:
    """The C++/CUDA sources of the module and the compiler flags handed to load_inline."""
    used: set[int] = set()
    sources: list[_NativeSource] = []
    flags: list[tuple[ast.Call, str, str]] = []
    for call in module.builders:
        if not (_qualname(call.func, module.aliases) or "").endswith("load_inline"):
            continue
        for keyword, position in (("cpp_sources", 1), ("cuda_sources", 2)):
            segments = _resolve_text(_call_argument(call, keyword, position), module, used=used)
            if segments:
                sources.append(_NativeSource(segments))
        for keyword in ("extra_cflags", "extra_cuda_cflags", "extra_ldflags"):
            segments = _resolve_text(_call_argument(call, keyword, None), module, used=used)
            if segments:
                flags.append((call, keyword, " ".join(text for text, _ in segments)))
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Call):
            qual = _qualname(node.func, module.aliases) or ""
            if qual.endswith((".RawKernel", ".RawModule", ".SourceModule")):
                segments = _resolve_text(_call_argument(node, "code", 0), module, used=used)
                if segments:
                    sources.append(_NativeSource(segments))
    for node in ast.walk(module.tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in used
            and any(marker in node.value for marker in _NATIVE_MARKERS)
        ):
            sources.append(_NativeSource([(node.value, node.lineno)]))
    return sources, flags


class _NativeScanner:
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

    def _sandbox(self, source: _NativeSource, code: str, commentless: str) -> None:
        for match in _CPP_SANDBOX.finditer(code):
            self._add(
                "sandbox",
                source,
                match.start(1),
                f"the C++ source calls {match.group(1)}(){{at}}: candidates may not start processes, open "
                f"sockets, read the environment or signal processes; remove it",
                confined=True,
            )
        match = _CPP_FILE_WRITE.search(code)
        if match:
            self._add(
                "sandbox",
                source,
                match.start(),
                f"the C++ source opens files ({match.group(0).rstrip('( ')}){{at}}; writing outside the "
                f"working directory or reading the harness's files is rejected at run time",
                "note",
            )
        match = _CPP_HARNESS.search(commentless)
        if match:
            self._add(
                "harness-read",
                source,
                match.start(),
                f"the C++ source reads process memory ({match.group(0).rstrip('( ')}){{at}}: reading the "
                f"harness's state is rejected; remove it",
            )
        match = _CPP_PYTHON.search(code)
        if match:
            self._add(
                "library-policy",
                source,
                match.start(),
                f"the C++ source calls back into Python ({match.group(0).rstrip('( <')}){{at}}, out of the "
                f"guard's sight; pass what the kernel needs as arguments instead",
            )
        match = _CPP_THREAD.search(code)
        if match:
            detached = _CPP_DETACH.search(code)
            self._add(
                "deferred-work",
                source,
                match.start(),
                f"the C++ source starts threads ({match.group(0)}){{at}}"
                + (
                    ": a detached thread or async task can finish after forward returns; join it before " "returning"
                    if detached
                    else "; they must be joined before forward returns"
                ),
                "reject" if detached else "note",
            )
        match = _CPP_INTERPOSE.search(commentless)
        if match:
            self._add(
                "timer-patch",
                source,
                match.start(),
                f"the C++ source defines or interposes a timing function ({match.group(0)[:60].strip()})"
                f"{{at}}: the harness's timing must stay untouched; remove it",
            )

    def kernel_names(self, source: _NativeSource) -> set[str]:
        return set(_CPP_PYBIND_NAME.findall(source.without_comments))
