"""Static guard: reward-hack checks on a candidate's source, before any of it runs.

:func:`analyze` parses the candidate with :mod:`ast` and scans the C++/CUDA strings it hands to
``load_inline``. It returns findings ``{"check", "severity", "message", "line"}``: ``check`` is a
stable id from :data:`CHECKS`, ``severity`` is ``"reject"`` (the verdict is ``rejected``) or
``"note"`` (recorded, the dynamic checks decide), ``message`` is one sentence a person can act on,
``line`` is 1-based or ``None``. The guard is conservative where it cannot know types: a method is
treated as a tensor method unless its receiver is known to be something else (a built extension,
a Python list, a dict). See HACKS.md for the classes behind each check.

This file is long because the per-check walkers share one symbol table; the name tables live at
the top, the Python walkers in the middle, the native-source scanner at the end.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping

from .policy import load_policy

#: Stable check ids and what each one catches.
CHECKS: dict[str, str] = {
    "syntax": "the candidate is not valid Python (the worker reports invalid_input)",
    "guard-error": "the candidate is too deeply nested for the guard to analyse",
    "torch-fallback": "forward does its work with PyTorch compute (torch.*, F.*, tensor methods, "
                      "operators, torch.nn modules, the reference Model, torch.compile)",
    "silent-fallback": "a PyTorch path in an except handler, or a ModelNew that inherits or lacks forward",
    "timer-patch": "assignments to timing functions, modules, builtins or sys.modules",
    "harness-read": "frame inspection, gc object scans, raw memory reads, imports of the harness",
    "sandbox": "environment reads, network, subprocesses, writes outside the cwd, dynamic code",
    "deferred-work": "threads, executors, processes, tensor subclasses, __torch_function__ hooks",
    "side-stream": "non-default CUDA streams (a note: the dynamic check decides)",
    "result-cache": "caches keyed on data_ptr/id/hash or sampled values, lru_cache on tensor functions",
    "phase-detect": "call counters, clock reads and grad/inference-mode checks in forward",
    "precision": "casts below the run precision, TF32/reduced-precision switches, autocast",
    "global-state": "torch.backends assignments, thread counts, seeds, persisting-L2 windows",
    "library-policy": "native code calling ATen/LibTorch compute or vendor libraries the policy forbids",
}

# ---------------------------------------------------------------------------------------------
# Name tables
# ---------------------------------------------------------------------------------------------

_COMPUTE_WORDS = """
abs absolute acos acosh addbmm addcdiv addcmul addmm addmv addr add all allclose amax amin aminmax
angle any arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin argsort argwhere asin
asinh atan atan2 atanh baddbmm bernoulli bincount bitwise_and bitwise_not bitwise_or bitwise_xor
bitwise_left_shift bitwise_right_shift bmm cauchy ceil cholesky clamp clamp_max clamp_min clip
conj_physical copysign corrcoef cos cosh count_nonzero cov cross cummax cummin cumprod cumsum
deg2rad det diag diag_embed diagflat diff digamma dist div divide dot eq equal erf erfc erfinv exp
exp2 expm1 exponential fix flip fliplr flipud float_power floor floor_divide fmax fmin fmod frac
gather gcd ge geometric ger greater greater_equal gt hardshrink heaviside histc hypot i0 index_add
index_copy index_fill index_put index_reduce index_select inner inverse isclose isfinite isinf isnan
isneginf isposinf kron kthvalue lcm ldexp le lerp less less_equal lgamma log log10 log1p log2
log_softmax logaddexp logaddexp2 logcumsumexp logdet logical_and logical_not logical_or logical_xor
logit logsumexp lt lu masked_fill masked_scatter masked_select matmul matrix_exp matrix_power max
maximum mean median min minimum mm mode msort mul multinomial multiply mv mvlgamma nan_to_num nanmean
nanmedian nanquantile nansum ne neg negative nextafter nonzero norm normal not_equal outer pinverse
polygamma pow prelu prod put quantile rad2deg random reciprocal relu remainder renorm repeat
repeat_interleave roll rot90 round rsqrt scatter scatter_add scatter_reduce sgn sigmoid sign signbit
sin sinc sinh slogdet softmax sort sqrt square std sub subtract sum sum_to_size svd take
take_along_dim tan tanh tile topk trace tril triu true_divide trunc uniform unique unique_consecutive
var vdot where xlogy narrow_copy diagonal_scatter select_scatter slice_scatter as_strided_scatter
unfold fill_diagonal log_normal
"""

_FUNCTIONAL_WORDS = """
conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d convolution _convolution
linear bilinear layer_norm group_norm batch_norm instance_norm rms_norm native_layer_norm
native_batch_norm embedding embedding_bag dropout gelu silu mish elu selu celu leaky_relu hardtanh
hardswish hardsigmoid softplus softsign softmin threshold relu6 rrelu glu logsigmoid tanhshrink
softshrink max_pool1d max_pool2d max_pool3d avg_pool1d avg_pool2d avg_pool3d adaptive_max_pool1d
adaptive_max_pool2d adaptive_max_pool3d adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d
lp_pool1d lp_pool2d cat concat concatenate stack hstack vstack dstack einsum tensordot cdist
cosine_similarity pairwise_distance mse_loss l1_loss cross_entropy nll_loss smooth_l1_loss kl_div
binary_cross_entropy binary_cross_entropy_with_logits hinge_embedding_loss triplet_margin_loss
huber_loss margin_ranking_loss cosine_embedding_loss scaled_dot_product_attention _softmax
_log_softmax chain_matmul interpolate upsample pixel_shuffle pixel_unshuffle pad constant_pad_nd
grid_sample normalize one_hot addmm_ cudnn_convolution mkldnn_convolution frobenius_norm
nuclear_norm cumulative_trapezoid trapezoid logspace linspace histogram bucketize searchsorted
"""


def _with_inplace(words: Iterable[str]) -> frozenset[str]:
    names = set(words)
    names |= {name + "_" for name in list(names)}
    return frozenset(names)


_DUNDER_COMPUTE = frozenset(
    f"__{op}__" for op in (
        "add radd iadd sub rsub isub mul rmul imul matmul rmatmul imatmul truediv rtruediv itruediv "
        "floordiv rfloordiv ifloordiv mod rmod pow rpow ipow neg abs and or xor invert lshift rshift "
        "lt le gt ge eq ne"
    ).split()
)

#: Tensor methods that compute (the guard's deny-list for receivers of unknown type).
COMPUTE_TENSOR_METHODS: frozenset[str] = _with_inplace(_COMPUTE_WORDS.split()) | _DUNDER_COMPUTE
#: ATen/LibTorch function names that compute (used for C++ ``at::``/``torch::`` calls).
COMPUTE_FUNCTIONS: frozenset[str] = COMPUTE_TENSOR_METHODS | _with_inplace(_FUNCTIONAL_WORDS.split())

#: Tensor methods that return Python values, not tensors (for type inference).
_SCALAR_METHODS = frozenset(
    "size dim ndimension numel nelement stride storage_offset element_size is_contiguous "
    "is_floating_point is_complex is_pinned data_ptr get_device item numpy untyped_storage "
    "storage __len__ dim_order".split()
)
#: Methods of Python lists, dicts and strings that share a name with a tensor method.
_PYTHON_CONTAINER_TYPES = frozenset({"list", "container", "str", "number"})

_TORCH_COMPUTE_PREFIXES = (
    "torch.nn.functional.", "torch._C._nn.", "torch._C._VariableFunctions.", "torch.ops.aten.",
    "torch.ops.prims.", "torch._ops.ops.aten.", "torch._refs.", "torch._prims.", "torch.linalg.",
    "torch.fft.", "torch.special.", "torch.sparse.", "torch.nested.", "torch.masked.",
    "torch.distributions.", "torch.func.", "torch.nn.init.", "torch.nn.utils.", "torch.autograd.grad",
    "torch.utils.checkpoint.", "torch._C._linalg.", "torch._C._fft.", "torch._C._special.",
)
_TORCH_COMPILERS = ("torch.compile", "torch.jit.script", "torch.jit.trace", "torch.jit.trace_module",
                    "torch._dynamo.optimize", "torch.fx.symbolic_trace")
_NN_NOT_COMPUTE = frozenset({"Parameter", "ParameterList", "ParameterDict", "Module", "Identity",
                             "UninitializedParameter", "UninitializedBuffer", "Buffer"})
_NN_CONTAINERS = frozenset({"ModuleList", "Sequential", "ModuleDict"})
_EXTENSION_BUILDERS = ("torch.utils.cpp_extension.load_inline", "torch.utils.cpp_extension.load")

_PHASE_CALLS = frozenset({
    "torch.is_grad_enabled", "torch.is_inference_mode_enabled", "torch._C.is_grad_enabled",
    "torch._C._is_inference_mode_enabled", "torch.jit.is_scripting", "torch.jit.is_tracing",
    "torch._C._get_tracing_state", "torch.compiler.is_compiling", "torch._dynamo.is_compiling",
    "torch.cuda.is_current_stream_capturing", "torch.cuda.graphs.is_current_stream_capturing",
    "torch.autograd.grad_mode.is_grad_enabled", "torch.compiler.is_dynamo_compiling",
})
_CLOCKS = frozenset({
    "time.time", "time.perf_counter", "time.monotonic", "time.process_time", "time.thread_time",
    "time.time_ns", "time.perf_counter_ns", "time.monotonic_ns", "time.process_time_ns",
    "time.thread_time_ns", "time.clock_gettime", "time.clock_gettime_ns", "datetime.datetime.now",
    "datetime.datetime.utcnow", "timeit.default_timer",
})

_NETWORK_MODULES = frozenset({
    "socket", "ssl", "urllib", "urllib2", "urllib3", "http", "httpx", "requests", "aiohttp", "ftplib",
    "smtplib", "poplib", "imaplib", "telnetlib", "xmlrpc", "websocket", "websockets", "paramiko",
    "grpc", "zmq", "boto3", "botocore", "asyncssh", "pycurl", "socketserver",
})
_PROCESS_MODULES = frozenset({"subprocess", "pty", "pexpect", "sh", "plumbum"})
_CONCURRENCY_MODULES = frozenset({"threading", "_thread", "concurrent", "multiprocessing", "asyncio",
                                  "torch.multiprocessing", "queue", "sched"})

_HARNESS_READ_CALLS = {
    "gc.get_objects": "scans every live Python object",
    "gc.get_referrers": "walks the referrers of objects",
    "gc.get_referents": "walks the referents of objects",
    "inspect.stack": "inspects the call stack",
    "inspect.currentframe": "takes the current frame",
    "inspect.getouterframes": "inspects the caller's frames",
    "inspect.getinnerframes": "inspects frames",
    "inspect.trace": "inspects frames",
    "sys._getframe": "takes a caller's frame",
    "sys._current_frames": "reads every thread's frame",
    "sys.settrace": "installs a trace hook on the harness",
    "sys.setprofile": "installs a profile hook on the harness",
    "threading.settrace": "installs a trace hook on the harness",
    "threading.setprofile": "installs a profile hook on the harness",
    "traceback.extract_stack": "inspects the call stack",
    "traceback.walk_stack": "inspects the call stack",
    "ctypes.string_at": "reads raw memory",
    "ctypes.wstring_at": "reads raw memory",
    "ctypes.memmove": "copies raw memory",
    "ctypes.memset": "writes raw memory",
    "ctypes.cast": "reinterprets raw pointers",
    "ctypes.addressof": "takes raw addresses",
    "inspect.getsource": "reads other modules' source files",
    "inspect.getsourcelines": "reads other modules' source files",
    "inspect.getsourcefile": "locates other modules' source files",
    "inspect.getfile": "locates other modules' source files",
}
_FRAME_ATTRIBUTES = frozenset({"f_back", "f_locals", "f_globals", "f_builtins", "tb_frame",
                               "gi_frame", "cr_frame", "ag_frame", "__subclasses__"})

_SUBPROCESS_CALLS = frozenset({
    "os.system", "os.popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.posix_spawnp",
    "os.kill", "os.killpg", "os.setsid", "os.setpgrp", "os.setpgid", "os.chdir", "os.fchdir",
    "os.chroot", "signal.signal", "signal.alarm", "signal.setitimer", "signal.pthread_kill",
    "resource.setrlimit", "os.sched_setaffinity", "os.nice",
})
_SUBPROCESS_PREFIXES = ("os.exec", "os.spawn", "subprocess.", "pty.", "pexpect.", "runpy.")
_DYNAMIC_CODE = frozenset({"builtins.exec", "builtins.eval", "builtins.compile",
                           "importlib.util.spec_from_file_location", "importlib.util.module_from_spec",
                           "importlib.machinery.SourceFileLoader", "importlib.reload",
                           "builtins.breakpoint", "code.interact", "pdb.set_trace"})
_FD_CALLS = frozenset({"os.write", "os.fdopen", "os.dup", "os.dup2", "os.close", "os.closerange",
                       "os.read", "os.sendfile", "os.set_inheritable", "os.ftruncate", "os.lseek"})
_WRITE_PATH_CALLS = {
    # qualified name: index of the path argument written to
    "os.remove": 0, "os.unlink": 0, "os.rename": 1, "os.replace": 1, "os.rmdir": 0,
    "os.removedirs": 0, "os.mkdir": 0, "os.makedirs": 0, "os.chmod": 0, "os.chown": 0,
    "os.symlink": 1, "os.link": 1, "os.truncate": 0, "os.utime": 0, "os.mkfifo": 0,
    "shutil.copy": 1, "shutil.copy2": 1, "shutil.copyfile": 1, "shutil.copytree": 1,
    "shutil.move": 1, "shutil.rmtree": 0, "torch.save": 1, "numpy.save": 0, "numpy.savez": 0,
    "pickle.dump": 1,
}
_READ_PATH_CALLS = {
    "os.listdir": 0, "os.scandir": 0, "os.walk": 0, "glob.glob": 0, "glob.iglob": 0,
    "torch.load": 0, "numpy.load": 0, "numpy.fromfile": 0, "linecache.getline": 0,
    "linecache.getlines": 0, "importlib.import_module": None,
}
_PATH_WRITE_METHODS = frozenset({"write_text", "write_bytes", "unlink", "rename", "replace", "touch",
                                 "mkdir", "rmdir", "chmod", "symlink_to", "hardlink_to"})
_PATH_READ_METHODS = frozenset({"read_text", "read_bytes", "iterdir", "glob", "rglob"})

_DEFERRED_CALLS = {
    "threading.Thread": "starts a thread",
    "threading.Timer": "starts a timer thread",
    "_thread.start_new_thread": "starts a thread",
    "_thread.start_new": "starts a thread",
    "concurrent.futures.ThreadPoolExecutor": "starts a thread pool",
    "concurrent.futures.ProcessPoolExecutor": "starts a process pool",
    "concurrent.futures.thread.ThreadPoolExecutor": "starts a thread pool",
    "asyncio.run": "runs an event loop",
    "asyncio.create_task": "schedules a task",
    "asyncio.ensure_future": "schedules a task",
    "asyncio.get_event_loop": "uses an event loop",
    "torch.jit.fork": "forks an asynchronous task",
    "atexit.register": "registers work to run at exit, after the harness saved its results",
    "weakref.finalize": "registers work to run when an object dies",
    "torch.Tensor._make_subclass": "builds a tensor subclass",
    "torch.Tensor._make_wrapper_subclass": "builds a tensor wrapper subclass",
    "torch._C._disabled_torch_function_impl": "hooks torch functions",
}
_DEFERRED_PREFIXES = ("multiprocessing.", "torch.multiprocessing.", "torch.futures.")
_TENSOR_BASES = frozenset({"torch.Tensor", "torch._C._TensorBase", "torch._C.TensorBase",
                           "torch.nn.Parameter", "torch.nn.parameter.Parameter",
                           "torch.utils._python_dispatch.TorchDispatchMode",
                           "torch.overrides.TorchFunctionMode", "torch.utils._mode_utils"})
_SIDE_STREAM_CALLS = frozenset({"torch.cuda.Stream", "torch.cuda.streams.Stream",
                                "torch.cuda.ExternalStream", "torch.cuda.stream",
                                "torch.cuda.set_stream", "torch.cuda.StreamContext",
                                "torch.Stream", "triton.runtime.driver.active.get_current_stream"})
_JOIN_METHODS = frozenset({"wait_stream", "wait_event", "synchronize"})

_GLOBAL_STATE_CALLS = frozenset({
    "torch.set_num_threads", "torch.set_num_interop_threads", "torch.manual_seed", "torch.seed",
    "torch.cuda.manual_seed", "torch.cuda.manual_seed_all", "torch.cuda.seed", "torch.cuda.seed_all",
    "torch.random.manual_seed", "torch.random.seed", "random.seed", "numpy.random.seed",
    "torch.use_deterministic_algorithms", "torch.set_deterministic_debug_mode",
    "torch.set_default_dtype", "torch.set_default_tensor_type", "torch.set_default_device",
    "torch.set_flush_denormal", "torch.set_grad_enabled", "torch.autograd.set_detect_anomaly",
    "torch.autograd.set_grad_enabled", "torch.cuda.set_per_process_memory_fraction",
    "torch.cuda.memory.set_per_process_memory_fraction", "torch.cuda.set_sync_debug_mode",
    "torch.set_warn_always", "torch.cuda.set_rng_state", "torch.set_rng_state",
    "torch.backends.cudnn.flags", "torch.backends.mkldnn.flags",
})
_PRECISION_CALLS = frozenset({"torch.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast",
                              "torch.amp.autocast", "torch.set_autocast_enabled"})
_PRECISION_FLAGS = ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                    "allow_bf16_reduced_precision_reduction", "fp32_precision")
_TIMING_TARGETS = ("torch.cuda.Event", "torch.cuda.synchronize", "torch.cuda.streams",
                   "torch.cuda.Stream", "torch.Event", "torch.cuda.current_stream",
                   "torch.cuda.default_stream", "torch.cuda.event", "torch.synchronize")

_RANK = {"float64": 3, "float32": 2, "float16": 1, "bfloat16": 1, "float8": 0}
_DTYPE_NAMES = {
    "torch.float16": "float16", "torch.half": "float16", "torch.bfloat16": "bfloat16",
    "torch.float32": "float32", "torch.float": "float32", "torch.float64": "float64",
    "torch.double": "float64", "torch.HalfTensor": "float16", "torch.cuda.HalfTensor": "float16",
    "torch.BFloat16Tensor": "bfloat16", "torch.cuda.BFloat16Tensor": "bfloat16",
}
_RUN_PRECISIONS = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64"}

_IDENTITY_METHODS = frozenset({"data_ptr", "_version", "_cdata", "__hash__", "storage_offset"})
_SAMPLING_METHODS = frozenset({"item", "tolist"})
_CONTAINER_FACTORIES = frozenset({
    "builtins.dict", "builtins.list", "builtins.set", "collections.OrderedDict",
    "collections.defaultdict", "weakref.WeakKeyDictionary", "weakref.WeakValueDictionary",
    "collections.deque", "collections.Counter",
})
_KEY_BUILDERS = frozenset({"builtins.tuple", "builtins.str", "builtins.bytes", "builtins.repr",
                           "builtins.frozenset", "builtins.int", "builtins.float", "builtins.round",
                           "builtins.format", "builtins.hex"})
_CACHE_DECORATORS = frozenset({"functools.lru_cache", "functools.cache", "functools.cached_property"})

_BUILTIN_NAMES = frozenset(dir(builtins))


# ---------------------------------------------------------------------------------------------
# Findings
# ---------------------------------------------------------------------------------------------


@dataclass
class _Report:
    policy: Mapping[str, Any]
    findings: list[dict[str, Any]] = field(default_factory=list)

    def add(self, check: str, message: str, line: int | None, severity: str = "reject") -> None:
        self.findings.append({"check": check, "severity": severity, "message": message, "line": line})

    def finish(self) -> list[dict[str, Any]]:
        policy = self.policy
        seen: set[tuple[Any, ...]] = set()
        out: list[dict[str, Any]] = []
        for finding in self.findings:
            severity = policy["severity"].get(finding["check"], finding["severity"])
            if finding["check"] in ("torch-fallback", "silent-fallback") and policy["forward_torch"] == "any":
                severity = "note"
            if not policy["enforce"]:
                severity = "note"
            key = (finding["check"], finding["line"], finding["message"])
            if key in seen:
                continue
            seen.add(key)
            out.append({**finding, "severity": severity})
        out.sort(key=lambda item: (item["line"] if item["line"] is not None else 0, item["check"]))
        return out


def _line(node: ast.AST | None) -> int | None:
    return getattr(node, "lineno", None)


def _at(node: ast.AST | None) -> str:
    line = _line(node)
    return f" (line {line})" if line is not None else ""


# ---------------------------------------------------------------------------------------------
# Module symbol table
# ---------------------------------------------------------------------------------------------


@dataclass
class _Module:
    tree: ast.Module
    parents: dict[ast.AST, ast.AST]
    aliases: dict[str, str]
    string_defs: dict[str, list[tuple[str, ast.expr]]]
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
    classes: dict[str, ast.ClassDef]
    ext_names: set[str] = field(default_factory=set)
    ext_functions: set[str] = field(default_factory=set)
    kernel_names: set[str] = field(default_factory=set)
    triton_kernels: set[str] = field(default_factory=set)
    reference_names: set[str] = field(default_factory=set)
    builders: list[ast.Call] = field(default_factory=list)
    local_names: set[str] = field(default_factory=set)


def _import_aliases(tree: ast.Module) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    aliases[root] = root
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if alias.name != "*":
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _qualname(node: ast.AST | None, aliases: Mapping[str, str], local: Mapping[str, str] | None = None,
              shadowed: Iterable[str] = ()) -> str | None:
    """Dotted name of an expression rooted in an imported module (``F.relu`` → torch.nn.functional.relu)."""
    if isinstance(node, ast.Name):
        if local is not None and node.id in local:
            return local[node.id]
        if node.id in aliases:
            return aliases[node.id]
        if node.id in _BUILTIN_NAMES and node.id not in shadowed:
            return f"builtins.{node.id}"
        return None
    if isinstance(node, ast.Attribute):
        base = _qualname(node.value, aliases, local, shadowed)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Call):
        func = _qualname(node.func, aliases, local, shadowed)
        constant = _fold_string(node.args[1]) if func == "builtins.getattr" and len(node.args) >= 2 else None
        if constant is not None:
            base = _qualname(node.args[0], aliases, local, shadowed)
            return f"{base}.{constant}" if base else None
        if func in ("importlib.import_module", "builtins.__import__") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                return first.value
        return None
    if isinstance(node, ast.Subscript):
        if _qualname(node.value, aliases, local, shadowed) == "sys.modules":
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value != "__main__":
                return key.value
    return None


def _fold_string(node: ast.AST, depth: int = 0) -> str | None:
    """A string built only from constants ("re" + "lu", f"{'re'}lu", "".join([...]))."""
    if depth > 20:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _fold_string(node.left, depth + 1), _fold_string(node.right, depth + 1)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            inner = value.value if isinstance(value, ast.FormattedValue) else value
            folded = _fold_string(inner, depth + 1)
            if folded is None:
                return None
            parts.append(folded)
        return "".join(parts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" \
            and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)):
        separator = _fold_string(node.func.value, depth + 1)
        items = [_fold_string(item, depth + 1) for item in node.args[0].elts]
        if separator is not None and all(item is not None for item in items):
            return separator.join(items)  # type: ignore[arg-type]
    return None


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    return parents


def _decorator_names(node: ast.AST, module: _Module) -> list[str]:
    names = []
    for decorator in getattr(node, "decorator_list", []):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        names.append(_qualname(target, module.aliases) or "")
    return names


def _string_list(node: ast.AST | None) -> list[str]:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [item.value for item in node.elts
                if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    return []


def _call_argument(call: ast.Call, keyword: str, position: int | None) -> ast.expr | None:
    for item in call.keywords:
        if item.arg == keyword:
            return item.value
    if position is not None and len(call.args) > position:
        return call.args[position]
    return None


def _build_module(tree: ast.Module) -> _Module:
    module = _Module(tree=tree, parents=_parents(tree), aliases=_import_aliases(tree), string_defs={},
                     functions={}, classes={})
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            module.functions[node.name] = node
            module.local_names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            module.classes[node.name] = node
            module.local_names.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    module.functions[target.id] = node.value  # type: ignore[assignment]
                    module.local_names.add(target.id)
    # Module-level aliases of imported things (``mm = torch.matmul``), twice for chains.
    for _ in range(2):
        module_ctx = _Ctx(module=module, cls=None, self_name=None)
        for node in tree.body:
            if isinstance(node, ast.Assign):
                qual = _alias_target(node.value, module_ctx)
                for target in node.targets:
                    if qual and isinstance(target, ast.Name):
                        module.aliases[target.id] = qual
    all_nodes = list(ast.walk(tree))
    assignments = [node for node in all_nodes if isinstance(node, ast.Assign)]
    for node in all_nodes:
        if isinstance(node, ast.Call):
            qual = _qualname(node.func, module.aliases)
            if qual in _EXTENSION_BUILDERS:
                module.builders.append(node)
                module.kernel_names.update(_string_list(_call_argument(node, "functions", 3)))
    # Names and functions bound to built extensions.
    for _ in range(2):
        for node in assignments:
            if _is_extension_expr(node.value, module):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        module.ext_names.add(target.id)
        for name, function in module.functions.items():
            for inner in ast.walk(function):
                if isinstance(inner, ast.Return) and inner.value is not None \
                        and _is_extension_expr(inner.value, module):
                    module.ext_functions.add(name)
    for name, function in module.functions.items():
        if any(qual.startswith("triton.") for qual in _decorator_names(function, module)):
            module.triton_kernels.add(name)
    if "Model" in module.classes or "Model" in module.aliases:
        module.reference_names.add("Model")
    _collect_strings(module)
    return module


def _is_extension_expr(node: ast.AST, module: _Module) -> bool:
    if isinstance(node, ast.Call):
        qual = _qualname(node.func, module.aliases)
        if qual in _EXTENSION_BUILDERS:
            return True
        if isinstance(node.func, ast.Name) and node.func.id in module.ext_functions:
            return True
        return False
    if isinstance(node, ast.Name):
        return node.id in module.ext_names
    if isinstance(node, ast.BoolOp):
        return any(_is_extension_expr(value, module) for value in node.values)
    if isinstance(node, ast.IfExp):
        return _is_extension_expr(node.body, module) or _is_extension_expr(node.orelse, module)
    return False


def _collect_strings(module: _Module) -> None:
    """Remember every assignment to a name whose value may be a string, per scope-free name."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    module.string_defs.setdefault(target.id, []).append(("=", node.value))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            module.string_defs.setdefault(node.target.id, []).append(("=", node.value))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) \
                and isinstance(node.op, ast.Add):
            module.string_defs.setdefault(node.target.id, []).append(("+=", node.value))


# ---------------------------------------------------------------------------------------------
# String resolution (for sources handed to load_inline)
# ---------------------------------------------------------------------------------------------

_Segments = list[tuple[str, int | None]]


def _resolve_text(node: ast.AST | None, module: _Module, depth: int = 0,
                  used: set[int] | None = None) -> _Segments | None:
    """Resolve an expression to string segments ``(text, first line)``, or ``None`` if unknown."""
    if node is None or depth > 12:
        return None
    used = used if used is not None else set()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        used.add(id(node))
        return [(node.value, node.lineno)]
    if isinstance(node, ast.JoinedStr):
        segments: _Segments = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                used.add(id(value))
                segments.append((value.value, node.lineno))
            elif isinstance(value, ast.FormattedValue):
                segments.extend(_resolve_text(value.value, module, depth + 1, used) or [(" ", node.lineno)])
        return segments
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _resolve_text(node.left, module, depth + 1, used)
        right = _resolve_text(node.right, module, depth + 1, used)
        if left is None and right is None:
            return None
        return (left or [(" ", _line(node))]) + (right or [(" ", _line(node))])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _resolve_text(node.left, module, depth + 1, used)
    if isinstance(node, (ast.List, ast.Tuple)):
        segments = []
        for item in node.elts:
            segments.extend((_resolve_text(item, module, depth + 1, used) or []) + [("\n", _line(item))])
        return segments or None
    if isinstance(node, ast.Name):
        definitions = module.string_defs.get(node.id, [])
        segments = []
        for operator, value in definitions:
            resolved = _resolve_text(value, module, depth + 1, used)
            if resolved is None:
                continue
            segments = resolved if operator == "=" and not segments else segments + [("\n", None)] + resolved
        return segments or None
    if isinstance(node, ast.Call):
        return _resolve_call_text(node, module, depth, used)
    return None


def _resolve_call_text(node: ast.Call, module: _Module, depth: int, used: set[int]) -> _Segments | None:
    qual = _qualname(node.func, module.aliases)
    if qual in ("textwrap.dedent", "inspect.cleandoc", "builtins.str") and node.args:
        return _resolve_text(node.args[0], module, depth + 1, used)
    if isinstance(node.func, ast.Attribute):
        receiver = _resolve_text(node.func.value, module, depth + 1, used)
        method = node.func.attr
        if method == "join" and receiver is not None and node.args:
            separator = "".join(text for text, _ in receiver)
            inner = node.args[0]
            if isinstance(inner, (ast.List, ast.Tuple)):
                pieces: _Segments = []
                for index, item in enumerate(inner.elts):
                    if index:
                        pieces.append((separator, _line(item)))
                    pieces.extend(_resolve_text(item, module, depth + 1, used) or [])
                return pieces
            return _resolve_text(inner, module, depth + 1, used)
        if receiver is None:
            return None
        if method in ("strip", "lstrip", "rstrip", "format", "encode", "decode", "upper", "lower"):
            return receiver if method not in ("upper", "lower") else \
                [(getattr(text, method)(), line) for text, line in receiver]
        if method == "replace" and len(node.args) >= 2:
            old = _resolve_text(node.args[0], module, depth + 1, used)
            new = _resolve_text(node.args[1], module, depth + 1, used)
            if old is not None and new is not None:
                old_text, new_text = "".join(t for t, _ in old), "".join(t for t, _ in new)
                line = receiver[0][1]
                return [("".join(t for t, _ in receiver).replace(old_text, new_text), line)]
            return receiver
    return None


def _join_segments(segments: _Segments) -> tuple[str, list[tuple[int, int | None]]]:
    starts: list[tuple[int, int | None]] = []
    text_parts: list[str] = []
    offset = 0
    for text, line in segments:
        starts.append((offset, line))
        text_parts.append(text)
        offset += len(text)
    return "".join(text_parts), starts


def _line_at(starts: list[tuple[int, int | None]], text: str, offset: int) -> int | None:
    chosen = None
    for start, line in starts:
        if start > offset:
            break
        if line is not None:
            chosen = (start, line)
    if chosen is None:
        return None
    return chosen[1] + text.count("\n", chosen[0], offset)


# ---------------------------------------------------------------------------------------------
# Type inference (just enough to tell tensors from extensions, lists and modules)
# ---------------------------------------------------------------------------------------------

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass
class _ClassInfo:
    node: ast.ClassDef
    methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
    attr_kinds: dict[str, str] = field(default_factory=dict)
    attr_quals: dict[str, str] = field(default_factory=dict)
    attr_aliases: dict[str, str] = field(default_factory=dict)


@dataclass
class _Ctx:
    module: _Module
    cls: _ClassInfo | None
    self_name: str | None
    kinds: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)

    def qual(self, node: ast.AST) -> str | None:
        found = _qualname(node, self.module.aliases, self.aliases, self.module.local_names)
        if found is None and self.cls is not None and isinstance(node, ast.Attribute):
            chain: list[str] = []
            current: ast.AST = node
            while isinstance(current, ast.Attribute):
                chain.append(current.attr)
                current = current.value
            if isinstance(current, ast.Name) and current.id in (self.self_name, self.cls.node.name) \
                    and chain[-1] in self.cls.attr_aliases:
                return ".".join([self.cls.attr_aliases[chain[-1]], *reversed(chain[:-1])])
        return found


def _nn_kind(qual: str, call: ast.Call, ctx: _Ctx) -> str | None:
    last = qual.rsplit(".", 1)[1]
    if last in ("Parameter", "Buffer"):
        return "tensor"
    if last in _NN_CONTAINERS:
        for inner in ast.walk(call):
            if inner is not call and isinstance(inner, ast.Call):
                inner_qual = ctx.qual(inner.func) or ""
                inner_last = inner_qual.rsplit(".", 1)[-1]
                if inner_qual.startswith("torch.nn.") and inner_last[:1].isupper() \
                        and inner_last not in _NN_NOT_COMPUTE and inner_last not in _NN_CONTAINERS:
                    return "torch-module-list"
        return "local-module-list"
    if last in _NN_NOT_COMPUTE:
        return None
    return "torch-module"


def _call_kind(node: ast.Call, ctx: _Ctx) -> str | None:
    module = ctx.module
    qual = ctx.qual(node.func)
    if qual:
        if qual in _EXTENSION_BUILDERS:
            return "ext"
        if qual in _CONTAINER_FACTORIES:
            return "list" if qual == "builtins.list" else "container"
        if qual in ("builtins.sorted", "builtins.range", "builtins.tuple", "builtins.enumerate",
                    "builtins.zip", "builtins.map"):
            return "list"
        if qual in ("builtins.len", "builtins.int", "builtins.float", "builtins.bool", "math.prod"):
            return "number"
        if qual == "itertools.count":
            return "counter"
        if qual in _SIDE_STREAM_CALLS:
            return "stream"
        last = qual.rsplit(".", 1)[-1]
        if qual.startswith("torch.nn.") and last[:1].isupper():
            return _nn_kind(qual, node, ctx)
        if qual.startswith(("torch.cuda.", "torch.utils.", "torch.backends.", "torch.version",
                            "torch.autograd.", "torch.library.", "torch.jit.")):
            return None
        if qual.startswith("torch."):
            if last in ("numel", "is_tensor", "is_floating_point", "is_complex", "get_default_dtype",
                        "Size", "device", "dtype", "finfo", "iinfo", "result_type", "promote_types",
                        "can_cast", "broadcast_shapes", "no_grad", "inference_mode", "enable_grad",
                        "get_num_threads", "typename", "Generator"):
                return None
            return "tensor"
        return None
    func = node.func
    if isinstance(func, ast.Name):
        if func.id in module.ext_functions:
            return "ext"
        if func.id in module.reference_names:
            return "reference"
        if func.id in module.classes:
            return f"instance:{func.id}"
        if ctx.kinds.get(func.id) == "kernel":
            return "tensor"
        return None
    if isinstance(func, ast.Attribute):
        receiver = _kind(func.value, ctx)
        method = func.attr
        if receiver in ("ext", "kernel"):
            return "tensor"
        if receiver == "tensor":
            if method == "tolist":
                return "list"
            if method in _SCALAR_METHODS:
                return "number"
            return "tensor"
        if receiver == "container" and method in ("get", "pop", "setdefault"):
            return "cached"
        if receiver is None and method in module.kernel_names:
            return "tensor"
        if receiver == "class" or (receiver or "").startswith("class:"):
            return "tensor" if method == "apply" else None
        return None
    return None


def _kind(node: ast.AST | None, ctx: _Ctx) -> str | None:
    """A coarse kind: tensor, ext, kernel, list, container, cached, number, str, torch-module, ..."""
    module = ctx.module
    if isinstance(node, ast.Name):
        if node.id == ctx.self_name:
            return "self"
        if node.id in ctx.kinds:
            return ctx.kinds[node.id]
        if node.id in module.ext_names:
            return "ext"
        if node.id in module.triton_kernels:
            return "triton"
        if node.id in module.reference_names:
            return "reference-class"
        if node.id in module.classes:
            return f"class:{node.id}"
        return None
    if isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Name) and node.value.id == ctx.self_name and ctx.cls:
            return ctx.cls.attr_kinds.get(node.attr)
        base = _kind(node.value, ctx)
        if base == "tensor":
            return "tensor" if node.attr in ("T", "mT", "H", "mH", "data", "real", "imag", "grad") else None
        if base == "ext":
            return "kernel"
        if base == "torch-module" and node.attr in ("weight", "bias", "running_mean", "running_var",
                                                    "in_proj_weight", "in_proj_bias"):
            return "tensor"
        return None
    if isinstance(node, ast.Call):
        return _call_kind(node, ctx)
    if isinstance(node, ast.Subscript):
        base = _kind(node.value, ctx)
        if base == "tensor":
            return "tensor"
        if base == "container":
            return "cached"
        if base == "torch-module-list":
            return "torch-module"
        return None
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.MatMult):
            return "tensor"
        kinds = (_kind(node.left, ctx), _kind(node.right, ctx))
        if "tensor" in kinds:
            return "tensor"
        if "list" in kinds:
            return "list"
        return "str" if "str" in kinds else None
    if isinstance(node, ast.UnaryOp):
        return _kind(node.operand, ctx)
    if isinstance(node, ast.IfExp):
        return _kind(node.body, ctx) or _kind(node.orelse, ctx)
    if isinstance(node, (ast.List, ast.ListComp, ast.GeneratorExp, ast.Tuple)):
        return "list"
    if isinstance(node, (ast.Dict, ast.DictComp, ast.Set, ast.SetComp)):
        return "container"
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return "str"
        if isinstance(node.value, (int, float, complex)) and not isinstance(node.value, bool):
            return "number"
    if isinstance(node, ast.JoinedStr):
        return "str"
    return None


def _bind(target: ast.AST, kind: str | None, value: ast.AST | None, ctx: _Ctx) -> None:
    if isinstance(target, ast.Name):
        if kind and ctx.kinds.get(target.id) != "tensor":
            ctx.kinds[target.id] = kind
    elif isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            for element, item in zip(target.elts, value.elts):
                _bind(element, _kind(item, ctx), item, ctx)
        elif kind in ("tensor", "list"):
            for element in target.elts:
                _bind(element, "tensor" if kind == "tensor" else None, None, ctx)
    elif isinstance(target, ast.Starred):
        _bind(target.value, kind, None, ctx)


def _walk(node: ast.AST, skip: tuple[type, ...] = (ast.ClassDef,)) -> Iterator[ast.AST]:
    """Like :func:`ast.walk`, without descending into nested nodes of the ``skip`` types."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if not isinstance(child, skip):
                stack.append(child)


def _alias_target(value: ast.AST, ctx: _Ctx) -> str | None:
    """The imported thing an expression names: ``torch.matmul``, ``getattr(F, "relu")``,
    ``functools.partial(F.relu, ...)``; ``None`` for anything else."""
    if isinstance(value, ast.Call):
        func = ctx.qual(value.func)
        if func == "functools.partial" and value.args:
            return _alias_target(value.args[0], ctx)
        if func not in ("builtins.getattr", "importlib.import_module", "builtins.__import__"):
            return None
    elif not isinstance(value, (ast.Name, ast.Attribute)):
        return None
    qual = ctx.qual(value)
    if qual is None or qual.startswith("builtins."):
        return None
    return qual


def _infer_locals(function: _FunctionNode, ctx: _Ctx, nodes: list[ast.AST] | None = None) -> None:
    nodes = nodes if nodes is not None else list(_walk(function))
    for _ in range(2):
        for node in nodes:
            if isinstance(node, ast.Assign):
                kind = _kind(node.value, ctx)
                for target in node.targets:
                    _bind(target, kind, node.value, ctx)
                    if isinstance(target, ast.Name) and kind is None:
                        qual = _alias_target(node.value, ctx)
                        if qual:
                            ctx.aliases[target.id] = qual
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                _bind(node.target, _kind(node.value, ctx), node.value, ctx)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                iterable = _kind(node.iter, ctx)
                if iterable == "tensor":
                    _bind(node.target, "tensor", None, ctx)
                elif iterable == "torch-module-list":
                    _bind(node.target, "torch-module", None, ctx)
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                _bind(node.optional_vars, _kind(node.context_expr, ctx), None, ctx)


def _class_info(module: _Module, name: str, cache: dict[str, _ClassInfo]) -> _ClassInfo | None:
    if name in cache:
        return cache[name]
    node = module.classes.get(name)
    if node is None:
        return None
    info = _ClassInfo(node=node, methods={})
    cache[name] = info
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            info.methods[item.name] = item
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in module.classes and base.id not in module.reference_names:
            parent = _class_info(module, base.id, cache)
            if parent:
                for method_name, method in parent.methods.items():
                    info.methods.setdefault(method_name, method)
                for attr, kind in parent.attr_kinds.items():
                    info.attr_kinds.setdefault(attr, kind)
    class_ctx = _Ctx(module=module, cls=None, self_name=None)
    for item in node.body:
        if isinstance(item, ast.Assign):
            qual = _alias_target(item.value, class_ctx)
            for target in item.targets:
                if qual and isinstance(target, ast.Name):
                    info.attr_aliases[target.id] = qual
    ordered = sorted(info.methods.values(), key=lambda fn: fn.name != "__init__")
    for method in ordered:
        self_name = method.args.args[0].arg if method.args.args else None
        ctx = _Ctx(module=module, cls=info, self_name=self_name)
        nodes = list(_walk(method))
        _infer_locals(method, ctx, nodes)
        for inner in nodes:
            pairs: list[tuple[str, ast.AST]] = []
            if isinstance(inner, ast.Assign):
                pairs = [(target.attr, inner.value) for target in inner.targets
                         if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                         and target.value.id == self_name]
            elif isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
                    and inner.func.attr in ("register_buffer", "register_parameter") and inner.args:
                label = inner.args[0]
                if isinstance(label, ast.Constant) and isinstance(label.value, str):
                    info.attr_kinds.setdefault(label.value, "tensor")
            for attr, value in pairs:
                alias = _alias_target(value, ctx)
                if alias:
                    info.attr_aliases.setdefault(attr, alias)
                kind = _kind(value, ctx)
                if kind is None and isinstance(value, ast.Attribute) and _kind(value.value, ctx) == "ext":
                    kind = "kernel"
                if kind and (attr not in info.attr_kinds or kind == "tensor"):
                    info.attr_kinds[attr] = kind
                    if isinstance(value, ast.Call):
                        info.attr_quals[attr] = ctx.qual(value.func) or ast.unparse(value.func)
    return info


# ---------------------------------------------------------------------------------------------
# forward: torch-fallback, silent-fallback, result-cache, phase-detect
# ---------------------------------------------------------------------------------------------


def _torch_verdict(qual: str, policy: Mapping[str, Any]) -> str | None:
    """How a call of ``qual`` counts inside forward: glue, compute, nn-module, custom-op, phase, skip."""
    if not qual.startswith("torch.") and qual != "torch":
        return None
    if qual in _TORCH_COMPILERS or qual in _SIDE_STREAM_CALLS or qual in _GLOBAL_STATE_CALLS \
            or qual in _PRECISION_CALLS or qual == "torch.set_float32_matmul_precision":
        return "skip"
    if qual in _PHASE_CALLS:
        return "phase"
    parts = qual.split(".")
    if parts[1] == "ops" and len(parts) > 2:
        return "compute" if parts[2] in ("aten", "prims", "quantized", "_quantized", "mkldnn",
                                         "_c10d_functional", "c10d_functional") else "custom-op"
    for prefix in policy["glue_torch_namespaces"]:
        if qual == prefix or qual.startswith(prefix + "."):
            return "glue"
    if qual.startswith(_TORCH_COMPUTE_PREFIXES):
        return "compute"
    if len(parts) == 2:
        return "glue" if parts[1] in policy["glue_torch_functions"] else "compute"
    if parts[1] == "Tensor" and len(parts) == 3:
        if parts[2] in policy["glue_tensor_methods"]:
            return "glue"
        return "compute" if parts[2] in COMPUTE_TENSOR_METHODS else "glue"
    if parts[1] == "nn" and parts[-1][:1].isupper():
        return "glue" if parts[-1] in _NN_NOT_COMPUTE else "nn-module"
    if parts[1] in ("backends", "autograd", "version", "testing", "_C", "overrides", "types",
                    "storage", "serialization", "hub", "profiler", "jit", "random"):
        return "glue"
    return "compute"


def _label(node: ast.AST, qual: str | None) -> str:
    written = ast.unparse(node)
    if qual and qual != written and not qual.startswith("builtins."):
        return f"{written} ({qual})"
    return written


@dataclass
class _Job:
    function: _FunctionNode
    cls: _ClassInfo | None
    param_kinds: dict[str, str]
    in_handler: bool
    self_param: bool
    via: str


class _ForwardWalker:
    """Follows forward into the methods and module functions it calls and checks each one."""

    def __init__(self, module: _Module, report: _Report, policy: Mapping[str, Any],
                 classes: dict[str, _ClassInfo]):
        self.module = module
        self.report = report
        self.policy = policy
        self.classes = classes
        self.visited: set[tuple[int, bool]] = set()
        self.reachable: set[int] = set()
        self.kernel_calls = 0
        self.queue: list[_Job] = []
        self.ctx = _Ctx(module, None, None)
        self.taint: dict[str, str] = {}

    # -- driving ---------------------------------------------------------------------------

    def run(self, info: _ClassInfo) -> None:
        for name in ("forward", "__call__"):
            function = info.methods.get(name)
            if function is None:
                continue
            params = function.args.posonlyargs + function.args.args
            defaults = function.args.defaults
            kinds: dict[str, str] = {}
            first_default = len(params) - len(defaults)
            for index, param in enumerate(params[1:], start=1):
                if index >= first_default:
                    default_kind = _kind(defaults[index - first_default], _Ctx(self.module, None, None))
                    if default_kind:
                        kinds[param.arg] = default_kind
                else:
                    kinds[param.arg] = "tensor"
            self.queue.append(_Job(function, info, kinds, False, True, "forward"))
        while self.queue:
            self._analyze(self.queue.pop())

    def _enqueue(self, function: _FunctionNode, cls: _ClassInfo | None, call: ast.Call, ctx: _Ctx,
                 skip_first: bool, in_handler: bool, self_param: bool) -> None:
        params = [arg.arg for arg in function.args.posonlyargs + function.args.args]
        if skip_first:
            params = params[1:]
        kinds: dict[str, str] = {}
        for param, argument in zip(params, call.args):
            kind = _kind(argument, ctx)
            if kind:
                kinds[param] = kind
        for keyword in call.keywords:
            kind = _kind(keyword.value, ctx) if keyword.arg else None
            if kind:
                kinds[keyword.arg] = kind
        name = getattr(function, "name", "<lambda>")
        self.queue.append(_Job(function, cls, kinds, in_handler, self_param, name))

    # -- reporting -------------------------------------------------------------------------

    def _fallback(self, node: ast.AST, what: str, in_handler: bool, verb: str = "calls",
                  advice: str = "move the work into the kernel") -> None:
        """``what`` names the PyTorch compute: forward {verb} {what} (line n): ..."""
        if in_handler:
            self.report.add("silent-fallback",
                            f"forward falls back to PyTorch in an except handler: it {verb} {what}{_at(node)}; "
                            f"a kernel failure must surface as an error, not as PyTorch's answer, so remove "
                            f"the fallback", _line(node))
        else:
            self.report.add("torch-fallback",
                            f"forward {verb} {what}{_at(node)}: the policy `{self.policy['name']}` allows "
                            f"only shape, view and allocation glue in forward; {advice}", _line(node))

    def _phase(self, node: ast.AST, what: str) -> None:
        self.report.add("phase-detect",
                        f"forward {what}{_at(node)}: timed calls must do the same work as checked calls; "
                        f"remove the state that tells them apart", _line(node))

    def _cache(self, node: ast.AST, what: str) -> None:
        self.report.add("result-cache",
                        f"forward {what}{_at(node)}: outputs must be computed from the inputs on every "
                        f"call; remove the cache", _line(node))

    # -- one function ----------------------------------------------------------------------

    def _analyze(self, job: _Job) -> None:
        key = (id(job.function), job.in_handler)
        if key in self.visited:
            return
        self.visited.add(key)
        self.reachable.add(id(job.function))
        function = job.function
        args = function.args.posonlyargs + function.args.args
        self_name = args[0].arg if job.self_param and args else None
        ctx = _Ctx(module=self.module, cls=job.cls, self_name=self_name, kinds=dict(job.param_kinds))
        nodes = list(_walk(function))
        _infer_locals(function, ctx, nodes)
        self.ctx = ctx
        self._check_decorators(job, function)
        handler_nodes: set[int] = set()
        test_nodes: set[int] = set()
        global_names: set[str] = set()
        local_names = {arg.arg for arg in args}
        for node in nodes:
            if isinstance(node, ast.ExceptHandler):
                for statement in node.body:
                    handler_nodes.update(id(inner) for inner in ast.walk(statement))
            elif isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
                test_nodes.update(id(inner) for inner in ast.walk(node.test))
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                global_names.update(node.names)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local_names.add(node.id)
        local_names -= global_names
        taint = self._taints(nodes, ctx)
        self.taint = taint
        for node in nodes:
            in_handler = job.in_handler or id(node) in handler_nodes
            if isinstance(node, ast.Call):
                self._call(node, ctx, in_handler, id(node) in test_nodes)
            elif isinstance(node, ast.BinOp):
                if isinstance(node.op, ast.MatMult):
                    self._fallback(node, "the `@` operator to tensors", in_handler, "applies")
                elif "tensor" in (_kind(node.left, ctx), _kind(node.right, ctx)):
                    self._fallback(node, f"`{_OPERATORS.get(type(node.op), '?')}` on tensors with PyTorch", in_handler,
                                   "computes")
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Invert)) \
                    and _kind(node.operand, ctx) == "tensor":
                self._fallback(node, "a unary operator on a tensor with PyTorch", in_handler, "computes")
            elif isinstance(node, ast.Compare):
                self._compare(node, ctx, in_handler, taint, local_names)
            elif isinstance(node, ast.AugAssign):
                self._augassign(node, ctx, in_handler, global_names, local_names)
            elif isinstance(node, ast.Assign):
                self._assign(node, ctx, taint, global_names, local_names)
            elif isinstance(node, ast.Subscript):
                if self._tainted(node.slice, taint) and self._is_cache(node.value, ctx, local_names):
                    self._cache(node, f"looks up `{ast.unparse(node)}` keyed on "
                                      f"{self._taint_label(node.slice, taint)}")
            elif isinstance(node, ast.Return) and node.value is not None and job.via == "forward":
                if _kind(node.value, ctx) == "cached":
                    self._cache(node, f"returns `{ast.unparse(node.value)}`, a value read from a cache")

    def _check_decorators(self, job: _Job, function: _FunctionNode) -> None:
        for qual in _decorator_names(function, self.module):
            if qual in _CACHE_DECORATORS and ("tensor" in job.param_kinds.values() or job.via == "forward"):
                self.report.add("result-cache",
                                f"{getattr(function, 'name', 'a function')} is wrapped in {qual}{_at(function)} "
                                f"and called from forward with tensors: a cache returns old answers for "
                                f"repeated inputs; remove the decorator", _line(function))

    def _call(self, node: ast.Call, ctx: _Ctx, in_handler: bool, in_test: bool) -> None:
        module = self.module
        func = node.func
        qual = ctx.qual(func)
        if qual:
            verdict = _torch_verdict(qual, self.policy)
            if verdict == "compute":
                self._fallback(node, _label(func, qual), in_handler)
            elif verdict == "nn-module":
                self._fallback(node, f"{_label(func, qual)}, a torch.nn module built in forward", in_handler)
            elif verdict == "custom-op":
                self.kernel_calls += 1
            elif verdict == "phase":
                self._phase(node, f"checks {qual}()")
            elif qual in _CLOCKS:
                self._phase(node, f"reads the clock with {qual}()")
            elif qual in ("sys._getframe", "inspect.stack", "inspect.currentframe") and in_test:
                self._phase(node, f"branches on {qual}()")
            elif qual.startswith("operator.") or qual in (
                    "builtins.sum", "builtins.max", "builtins.min", "builtins.abs", "builtins.pow",
                    "builtins.round", "builtins.divmod", "functools.reduce"):
                if any(_kind(argument, ctx) == "tensor" for argument in node.args):
                    self._fallback(node, f"{ast.unparse(func)}() on tensors", in_handler)
            elif qual == "builtins.next" and node.args and _kind(node.args[0], ctx) == "counter":
                self._phase(node, "counts its calls with next()")
            return
        if isinstance(func, ast.Name):
            kind = _kind(func, ctx)
            if func.id in module.functions and func.id not in module.triton_kernels:
                self._enqueue(module.functions[func.id], None, node, ctx, False, in_handler, False)
            elif func.id in module.triton_kernels or kind in ("kernel", "ext"):
                self.kernel_calls += 1
            elif kind == "torch-module":
                self._fallback(node, f"the torch.nn module `{func.id}`", in_handler)
            elif func.id in module.reference_names:
                self._fallback(node, "the reference Model", in_handler,
                               advice="the candidate must compute the result itself")
            return
        if isinstance(func, ast.Subscript):
            if _kind(func.value, ctx) == "triton":
                self.kernel_calls += 1
                return
            held = self._torch_in_container(func.value, ctx)
            if held:
                self._fallback(node, f"{held} through `{ast.unparse(func)}`", in_handler)
            return
        if not isinstance(func, ast.Attribute):
            return
        method = func.attr
        receiver = func.value
        if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super":
            if method in ("forward", "__call__"):
                self._fallback(node, "super().forward, the parent class's forward", in_handler,
                               advice="the candidate must compute the result itself")
            return
        receiver_kind = _kind(receiver, ctx)
        if receiver_kind == "self":
            self._self_call(node, method, ctx, in_handler)
            return
        if receiver_kind in ("torch-module", "torch-module-list") and method in ("forward", "__call__"):
            self._fallback(node, f"the forward of the torch.nn module `{ast.unparse(receiver)}`", in_handler)
        elif receiver_kind in ("reference", "reference-class") and method in ("forward", "__call__"):
            self._fallback(node, f"the reference Model ({ast.unparse(func)})", in_handler,
                           advice="the candidate must compute the result itself")
        elif receiver_kind in ("ext", "kernel", "triton"):
            self.kernel_calls += 1
        elif receiver_kind and receiver_kind.startswith("instance:") and method in ("forward", "__call__"):
            self._enqueue_class_method(receiver_kind.split(":", 1)[1], "forward", node, ctx, in_handler, True)
        elif receiver_kind and receiver_kind.startswith("class:"):
            if method in ("apply", "forward"):
                self._enqueue_class_method(receiver_kind.split(":", 1)[1], "forward", node, ctx,
                                           in_handler, False)
        elif receiver_kind in _PYTHON_CONTAINER_TYPES or receiver_kind in ("stream", "counter", "cached"):
            if method in ("get", "setdefault", "pop", "__contains__", "__getitem__") and node.args \
                    and self._tainted(node.args[0], self.taint):
                self._cache(node, f"looks up `{ast.unparse(node)}` keyed on "
                                  f"{self._taint_label(node.args[0], self.taint)}")
        elif receiver_kind is None and method in module.kernel_names:
            self.kernel_calls += 1
        elif method == "is_inference":
            self._phase(node, "checks Tensor.is_inference()")
        elif method in self.policy["glue_tensor_methods"]:
            return
        elif method in COMPUTE_TENSOR_METHODS:
            self._fallback(node, f"the tensor method .{method}() (`{ast.unparse(func)}`)", in_handler)

    def _torch_in_container(self, container: ast.AST, ctx: _Ctx) -> str | None:
        """A torch compute function reachable through a subscript (``OPS[0]``, ``F.__dict__["relu"]``)."""
        qual = ctx.qual(container) or ""
        if qual.endswith(".__dict__") and qual.startswith("torch"):
            return f"a function from {qual}"
        values: list[ast.AST] = []
        if isinstance(container, ast.Name):
            values = [value for _, value in self.module.string_defs.get(container.id, [])]
        elif isinstance(container, (ast.List, ast.Tuple, ast.Dict)):
            values = [container]
        for value in values:
            items = value.values if isinstance(value, ast.Dict) else getattr(value, "elts", [])
            for item in items:
                item_qual = ctx.qual(item) if item is not None else None
                if item_qual and _torch_verdict(item_qual, self.policy) in ("compute", "nn-module"):
                    return item_qual
        return None

    def _self_call(self, node: ast.Call, name: str, ctx: _Ctx, in_handler: bool) -> None:
        info = ctx.cls
        if info is None:
            return
        kind = info.attr_kinds.get(name)
        label = f"self.{name}"
        if kind in ("torch-module", "torch-module-list"):
            self._fallback(node, f"the torch.nn module {label} ({info.attr_quals.get(name, 'torch.nn')})",
                           in_handler, advice="its forward is PyTorch's, so use its weights in your own kernel")
        elif kind == "reference":
            self._fallback(node, f"the reference Model held in {label}", in_handler,
                           advice="the candidate must compute the result itself")
        elif kind in ("kernel", "ext"):
            self.kernel_calls += 1
        elif kind and kind.startswith("instance:"):
            self._enqueue_class_method(kind.split(":", 1)[1], "forward", node, ctx, in_handler, True)
        elif name in info.methods:
            self._enqueue(info.methods[name], info, node, ctx, False, in_handler, True)

    def _enqueue_class_method(self, class_name: str, method: str, node: ast.Call, ctx: _Ctx,
                              in_handler: bool, bound: bool) -> None:
        info = _class_info(self.module, class_name, self.classes)
        if info is None or method not in info.methods:
            return
        function = info.methods[method]
        is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
        # autograd.Function.forward(ctx, ...) is static: skip ctx; bound methods skip self.
        self._enqueue(function, info, node, ctx, True, in_handler, bound and not is_static)

    def _compare(self, node: ast.Compare, ctx: _Ctx, in_handler: bool, taint: dict[str, str],
                 local_names: set[str]) -> None:
        operands = [node.left, *node.comparators]
        value_ops = [op for op in node.ops if not isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn))]
        if value_ops and any(_kind(operand, ctx) == "tensor" for operand in operands):
            self._fallback(node, "a comparison of tensors with PyTorch", in_handler, "computes")
        if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and self._tainted(node.left, taint):
            self._cache(node, f"tests `{ast.unparse(node)}` against stored keys made from "
                              f"{self._taint_label(node.left, taint)}")
        elif any(isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)) for op in node.ops):
            tainted = [operand for operand in operands if self._tainted(operand, taint)]
            stored = [operand for operand in operands if self._is_state(operand, ctx, local_names)]
            if tainted and stored:
                self._cache(node, f"compares {self._taint_label(tainted[0], taint)} with the stored "
                                  f"`{ast.unparse(stored[0])}` to recognise a repeated input")

    def _augassign(self, node: ast.AugAssign, ctx: _Ctx, in_handler: bool, global_names: set[str],
                   local_names: set[str]) -> None:
        target = node.target
        if _kind(target, ctx) == "tensor":
            self._fallback(node, f"`{_OPERATORS.get(type(node.op), '?')}=` on a tensor with PyTorch", in_handler,
                           "computes")
        elif self._is_state(target, ctx, local_names) or (isinstance(target, ast.Name) and target.id in global_names):
            self._phase(node, f"keeps a call counter (`{ast.unparse(node)}`)")

    def _assign(self, node: ast.Assign, ctx: _Ctx, taint: dict[str, str], global_names: set[str],
                local_names: set[str]) -> None:
        for target in node.targets:
            state = self._is_state(target, ctx, local_names) or \
                (isinstance(target, ast.Name) and target.id in global_names)
            if not state:
                continue
            text = ast.unparse(target)
            if isinstance(node.value, ast.BinOp) and any(
                    ast.unparse(inner) == text for inner in ast.walk(node.value) if inner is not node.value):
                self._phase(node, f"keeps a call counter (`{ast.unparse(node)}`)")
            elif self._tainted(node.value, taint, identity_only=True):
                self._cache(node, f"stores {self._taint_label(node.value, taint)} in `{text}` to recognise "
                                  f"the input on a later call")

    # -- state, caches and taint -----------------------------------------------------------

    def _is_state(self, node: ast.AST, ctx: _Ctx, local_names: set[str]) -> bool:
        """An expression that survives between calls: self.x, a module global, or an item of one."""
        while isinstance(node, ast.Subscript):
            node = node.value
        if isinstance(node, ast.Attribute):
            root = node
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id == ctx.self_name:
                return True
            return isinstance(root, ast.Name) and root.id not in local_names \
                and root.id not in self.module.aliases and root.id != "self"
        if isinstance(node, ast.Name):
            return node.id not in local_names and node.id not in self.module.aliases \
                and node.id not in self.module.functions and node.id not in self.module.classes \
                and node.id not in _BUILTIN_NAMES and node.id not in ctx.kinds
        return False

    def _is_cache(self, node: ast.AST, ctx: _Ctx, local_names: set[str]) -> bool:
        kind = _kind(node, ctx)
        if kind in ("tensor", "list", "str"):
            return False
        return kind in ("container", "cached") or self._is_state(node, ctx, local_names)

    def _taints(self, nodes: list[ast.AST], ctx: _Ctx) -> dict[str, str]:
        """Local names holding an input's identity (data_ptr, id, hash) or sampled values (item, tolist)."""
        taint: dict[str, str] = {}

        def bind(target: ast.AST, source: str) -> None:
            if isinstance(target, ast.Name):
                taint[target.id] = source
            elif isinstance(target, (ast.Tuple, ast.List)):
                for element in target.elts:
                    bind(element, source)

        for _ in range(2):
            for node in nodes:
                if isinstance(node, ast.Assign):
                    source = self._source(node.value, taint, ctx)
                    if source:
                        for target in node.targets:
                            bind(target, source)
        return taint

    def _source(self, node: ast.AST, taint: Mapping[str, str], ctx: _Ctx, depth: int = 0) -> str | None:
        """Where a key-like expression gets an input's identity or sampled values from, if it does.

        Taint flows through key-building (tuples, f-strings, str/tuple/hash, arithmetic), not
        through computation: a tensor built from ``x.tolist()`` is an output, not a key.
        """
        if depth > 30:
            return None
        if isinstance(node, ast.Call):
            qual = ctx.qual(node.func) or ""
            method = node.func.attr if isinstance(node.func, ast.Attribute) else None
            if qual in ("builtins.id", "builtins.hash") or qual.startswith(("hashlib.", "zlib.crc32")) \
                    or method in _IDENTITY_METHODS:
                return f"`{ast.unparse(node)}`"
            if method in _SAMPLING_METHODS and _kind(node.func.value, ctx) == "tensor":
                return f"sampled values (`{ast.unparse(node)}`)"
            if qual in _KEY_BUILDERS or method in ("hexdigest", "digest", "encode", "format", "join"):
                parts = list(node.args) + [keyword.value for keyword in node.keywords]
                if method:
                    parts.append(node.func.value)
                for part in parts:
                    found = self._source(part, taint, ctx, depth + 1)
                    if found:
                        return found
            return None
        if isinstance(node, ast.Attribute):
            if node.attr in ("_version", "_cdata"):
                return f"`{ast.unparse(node)}`"
            return self._source(node.value, taint, ctx, depth + 1)
        if isinstance(node, ast.Name):
            return taint.get(node.id)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.BinOp, ast.JoinedStr, ast.FormattedValue,
                             ast.Subscript, ast.Starred, ast.BoolOp, ast.UnaryOp)):
            for child in ast.iter_child_nodes(node):
                found = self._source(child, taint, ctx, depth + 1)
                if found:
                    return found
        return None

    def _tainted(self, node: ast.AST, taint: Mapping[str, str], identity_only: bool = False) -> bool:
        label = self._source(node, taint, self.ctx)
        return label is not None and not (identity_only and label.startswith("sampled"))

    def _taint_label(self, node: ast.AST, taint: Mapping[str, str]) -> str:
        return self._source(node, taint, self.ctx) or "the input's identity"


_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
              ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
              ast.LShift: "<<", ast.RShift: ">>"}


# ---------------------------------------------------------------------------------------------
# Whole module: timer-patch, harness-read, sandbox, deferred-work, side-stream, global-state,
# precision, torch.compile
# ---------------------------------------------------------------------------------------------

_LOW_DTYPE_PREFIX = "torch.float8"


def _dtype_of(node: ast.AST | None, module: _Module) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _DTYPE_NAMES.get(node.value) or ("float8" if node.value.startswith(_LOW_DTYPE_PREFIX) else None)
    qual = _qualname(node, module.aliases) if node is not None else None
    if qual is None:
        return None
    if qual.startswith(_LOW_DTYPE_PREFIX):
        return "float8"
    return _DTYPE_NAMES.get(qual)


class _ModuleChecker:
    def __init__(self, module: _Module, report: _Report, policy: Mapping[str, Any], precision: str):
        self.module = module
        self.report = report
        self.policy = policy
        self.run_dtype = _RUN_PRECISIONS.get(precision, "float32")
        self.precision = precision
        self.stream_sites: list[ast.AST] = []
        self.join_sites: list[ast.AST] = []

    def qual(self, node: ast.AST | None) -> str | None:
        return _qualname(node, self.module.aliases, None, self.module.local_names) if node is not None else None

    def run(self) -> None:
        for node in ast.walk(self.module.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self._import(alias.name, node)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                self._import(base, node)
                for alias in node.names:
                    if f"{base}.{alias.name}" in ("unittest.mock",):
                        self._import(f"{base}.{alias.name}", node)
            elif isinstance(node, ast.Call):
                self._call(node)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    self._target(target, node, getattr(node, "value", None))
            elif isinstance(node, ast.Delete):
                for target in node.targets:
                    self._target(target, node, None)
            elif isinstance(node, ast.ClassDef):
                self._class(node)
            elif isinstance(node, ast.Attribute):
                self._attribute(node)
            elif isinstance(node, ast.Name):
                if node.id == "__builtins__" and isinstance(node.ctx, ast.Store):
                    self._patch(node, "builtins")
                elif node.id in self.module.aliases:
                    self._module_object(node)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._decorators(node)
        self._side_stream_summary()

    # -- imports ---------------------------------------------------------------------------

    def _import(self, name: str, node: ast.AST) -> None:
        if not name:
            return
        root = name.split(".")[0]
        if root in _NETWORK_MODULES:
            self.report.add("sandbox", f"the candidate imports {name}{_at(node)}: candidates run without "
                                       f"network access; remove the import", _line(node))
        elif root in _PROCESS_MODULES:
            self.report.add("sandbox", f"the candidate imports {name}{_at(node)}: candidates may not start "
                                       f"processes; remove the import", _line(node))
        elif root == "__main__" or root.startswith("kforge"):
            self.report.add("harness-read", f"the candidate imports {name}{_at(node)}, the harness's own "
                                            f"module: a candidate may not reach into the evaluator; remove it",
                            _line(node))
        elif name == "unittest.mock" or root == "mock":
            self.report.add("timer-patch", f"the candidate imports {name}{_at(node)}, a patching library: "
                                           f"a candidate may not patch the harness or torch; remove it",
                            _line(node))
        elif name in _CONCURRENCY_MODULES or root in ("threading", "_thread", "multiprocessing",
                                                       "concurrent", "asyncio"):
            self.report.add("deferred-work", f"the candidate imports {name}{_at(node)}; starting threads, "
                                             f"processes or tasks is rejected, the output must be complete "
                                             f"when forward returns", _line(node), "note")
        elif root == "ctypes":
            self.report.add("harness-read", f"the candidate imports ctypes{_at(node)}; raw memory reads "
                                            f"through it are rejected", _line(node), "note")

    # -- calls -----------------------------------------------------------------------------

    def _call(self, node: ast.Call) -> None:
        qual = self.qual(node.func)
        if qual is None:
            self._method_call(node)
            return
        label = ast.unparse(node.func)
        line = _line(node)
        at = _at(node)
        if qual in _HARNESS_READ_CALLS:
            self.report.add("harness-read", f"the candidate calls {label}(){at}, which "
                                            f"{_HARNESS_READ_CALLS[qual]}: reading the harness's state is "
                                            f"rejected; compute the answer from the inputs", line)
        elif qual.startswith("ctypes.") and (qual.endswith((".from_address", ".from_buffer"))
                                              or qual.startswith("ctypes.pythonapi")):
            self.report.add("harness-read", f"the candidate calls {label}(){at}, which reads raw process "
                                            f"memory: reading the harness's state is rejected", line)
        elif qual in ("ctypes.CDLL", "ctypes.cdll.LoadLibrary", "ctypes.PyDLL", "ctypes.pydll.LoadLibrary",
                      "torch.ops.load_library", "torch.classes.load_library"):
            self.report.add("library-policy", f"the candidate loads a shared library with {label}(){at}; "
                                              f"the guard cannot see what it calls", line, "note")
        elif qual in ("torch.cuda.memory_snapshot", "torch.cuda.memory._snapshot",
                      "torch.cuda.memory._record_memory_history"):
            self.report.add("harness-read", f"the candidate reads the CUDA allocator's state with "
                                            f"{label}(){at}", line, "note")
        elif qual in _SUBPROCESS_CALLS or qual.startswith(_SUBPROCESS_PREFIXES):
            self.report.add("sandbox", f"the candidate calls {label}(){at}: candidates may not start "
                                       f"processes, send signals or change process state; remove it", line)
        elif qual.split(".")[0] in _NETWORK_MODULES:
            self.report.add("sandbox", f"the candidate calls {label}(){at}: candidates run without network "
                                       f"access; remove it", line)
        elif qual in _DYNAMIC_CODE:
            self.report.add("sandbox", f"the candidate calls {label}(){at}: code built or loaded at run time "
                                       f"cannot be checked; write it out in the candidate", line)
        elif qual in ("builtins.__import__", "importlib.import_module"):
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                self._import(first.value, node)
            else:
                self.report.add("sandbox", f"the candidate imports a module by a computed name{at}: "
                                           f"write the import out so it can be checked", line)
        elif qual in _FD_CALLS:
            self._fd_call(node, qual)
        elif qual in ("builtins.open", "io.open", "os.open", "codecs.open", "io.FileIO"):
            self._open(node, qual)
        elif qual in _WRITE_PATH_CALLS:
            self._path(node, _call_argument(node, "dst", _WRITE_PATH_CALLS[qual]), True, label)
        elif qual in _READ_PATH_CALLS and _READ_PATH_CALLS[qual] is not None:
            self._path(node, _call_argument(node, "path", _READ_PATH_CALLS[qual]), False, label)
        elif qual in ("os.getenv", "os.getenvb", "os.putenv", "os.unsetenv"):
            key = node.args[0] if node.args else None
            self._environment(node, key, write=qual in ("os.putenv", "os.unsetenv"), bulk=False)
        elif qual in _DEFERRED_CALLS or qual.startswith(_DEFERRED_PREFIXES):
            description = _DEFERRED_CALLS.get(qual, "starts a process")
            self.report.add("deferred-work", f"the candidate calls {label}(){at}, which {description}: the "
                                             f"output must be computed before forward returns, on the "
                                             f"calling thread; remove it", line)
        elif qual in _SIDE_STREAM_CALLS:
            self.stream_sites.append(node)
        elif qual == "torch.cuda.synchronize":
            self.join_sites.append(node)
        elif qual in _GLOBAL_STATE_CALLS:
            if not self._is_context(node):
                self.report.add("global-state", f"the candidate calls {label}(){at}: changing global torch "
                                                f"state (threads, seeds, defaults) is not part of a kernel and "
                                                f"skews the comparison; remove it", line)
        elif qual == "torch.set_float32_matmul_precision":
            self._matmul_precision(node)
        elif qual in _PRECISION_CALLS:
            if self.run_dtype == "float32":
                self.report.add("precision", f"the candidate runs under {label}(){at} while the run precision "
                                             f"is {self.precision}: autocast computes in float16/bfloat16; "
                                             f"keep {self.precision} arithmetic", line,
                                self.policy["precision_downgrade"])
        elif qual in _TORCH_COMPILERS:
            self.report.add("torch-fallback", f"the candidate uses {label}{at}: code generated from PyTorch "
                                              f"ops is a PyTorch fallback; write the kernel yourself", line)
        elif qual in ("builtins.setattr", "builtins.delattr", "object.__setattr__", "object.__delattr__"):
            self._setattr(node)
        elif qual == "builtins.getattr" and len(node.args) >= 2 and _fold_string(node.args[1]) is None \
                and (self.qual(node.args[0]) or "").split(".")[0] == "torch":
            self.report.add("torch-fallback", f"the candidate looks up a torch attribute by a computed name "
                                              f"(`{ast.unparse(node)}`){at}: write the name out so the call "
                                              f"can be checked", line)
        elif qual.startswith(("unittest.mock.", "mock.")):
            self.report.add("timer-patch", f"the candidate patches with {label}(){at}: a candidate may not "
                                           f"patch the harness or torch; remove it", line)
        elif qual == "triton.language.dot":
            self._triton_dot(node)
        elif qual == "torch.utils.cpp_extension.load":
            self.report.add("library-policy", f"the candidate builds from source files with {label}(){at}; "
                                              f"only inline sources can be checked, so pass them to "
                                              f"load_inline", line, "note")
        elif qual.startswith("sys.modules."):
            self._sys_modules_method(node, qual.rsplit(".", 1)[1])
        elif qual.startswith("os.environ."):
            pass  # handled where os.environ itself appears
        elif qual.startswith("pathlib.") and isinstance(node.func, ast.Attribute):
            self._method_call(node)
        self._cast(node)

    def _method_call(self, node: ast.Call) -> None:
        func = node.func
        if not isinstance(func, ast.Attribute):
            return
        if func.attr in _JOIN_METHODS:
            self.join_sites.append(node)
        if func.attr in _PATH_WRITE_METHODS | _PATH_READ_METHODS | {"open"}:
            receiver = func.value
            if isinstance(receiver, ast.Call) and self.qual(receiver.func) in ("pathlib.Path", "pathlib.PurePath"):
                path = receiver.args[0] if receiver.args else None
                write = func.attr in _PATH_WRITE_METHODS or (func.attr == "open" and self._write_mode(
                    _call_argument(node, "mode", 0)))
                self._path(node, path, write, f"pathlib.Path.{func.attr}")
        self._cast(node)

    def _is_context(self, node: ast.AST) -> bool:
        parent = self.module.parents.get(node)
        return isinstance(parent, ast.withitem)

    def _fd_call(self, node: ast.Call, qual: str) -> None:
        first = node.args[0] if node.args else None
        if isinstance(first, ast.Constant) and isinstance(first.value, int) and first.value in (0, 1, 2) \
                and qual in ("os.write", "os.read", "os.fdopen"):
            return
        target = ast.unparse(first) if first is not None else "a descriptor"
        self.report.add("sandbox", f"the candidate calls {qual}({target}){_at(node)}: file descriptors other "
                                   f"than stdin/stdout/stderr belong to the worker (its result channel); "
                                   f"print to stdout instead", _line(node))

    def _write_mode(self, mode: ast.AST | None) -> bool:
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
            return any(flag in mode.value for flag in "wax+")
        return mode is not None

    def _open(self, node: ast.Call, qual: str) -> None:
        path = _call_argument(node, "file", 0) or _call_argument(node, "path", None)
        if qual == "os.open":
            flags = _call_argument(node, "flags", 1)
            text = ast.unparse(flags) if flags is not None else ""
            write = any(flag in text for flag in ("O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"))
        else:
            write = self._write_mode(_call_argument(node, "mode", 1))
        if isinstance(path, ast.Constant) and isinstance(path.value, int):
            if path.value not in (0, 1, 2):
                self.report.add("sandbox", f"the candidate opens file descriptor {path.value}{_at(node)}: "
                                           f"descriptors other than stdin/stdout/stderr belong to the worker "
                                           f"(its result channel); print to stdout instead", _line(node))
            return
        self._path(node, path, write, "open")

    def _path(self, node: ast.AST, path: ast.AST | None, write: bool, what: str) -> None:
        if path is None:
            return
        text = _constant_path(path, self.module)
        line, at = _line(node), _at(node)
        if text is None:
            pieces = [inner.value for inner in ast.walk(path)
                      if isinstance(inner, ast.Constant) and isinstance(inner.value, str)]
            names = {self.qual(inner) for inner in ast.walk(path) if isinstance(inner, (ast.Name, ast.Attribute))}
            suspicious = any(".." in piece or piece.startswith("/") for piece in pieces) or \
                bool(names & {"sys.argv", "builtins.__file__", "glob.glob", "os.environ", "inspect.stack"}) or \
                any(isinstance(inner, ast.Name) and inner.id == "__file__" for inner in ast.walk(path))
            if write:
                self.report.add("sandbox", f"the candidate writes to a computed path with {what}{at}: write "
                                           f"only to constant relative paths inside the working directory", line)
            elif suspicious:
                self.report.add("sandbox", f"the candidate reads `{ast.unparse(path)}` with {what}{at}: "
                                           f"reading the problem, the harness or files outside the working "
                                           f"directory is rejected", line)
            else:
                self.report.add("sandbox", f"the candidate reads a computed path with {what}{at}; reading "
                                           f"the problem, the harness or other files is rejected", line, "note")
            return
        lowered = text.lower()
        if lowered.startswith("/proc/") or lowered in ("/dev/mem", "/dev/kmem", "/dev/port"):
            if any(word in lowered for word in ("/mem", "/maps", "/pagemap", "/smaps", "kmem", "/port")):
                self.report.add("harness-read", f"the candidate opens {text}{at}, the process's memory: "
                                                f"reading the harness's state is rejected", line)
                return
            if lowered.startswith(("/proc/cpuinfo", "/proc/meminfo")) and not write:
                return
            self.report.add("sandbox", f"the candidate opens {text}{at}: process information is not the "
                                       f"candidate's to read; remove it", line)
            return
        if text in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/urandom", "/dev/random"):
            return
        parts = re.split(r"[\\/]", text)
        outside = text.startswith(("/", "~", "\\")) or bool(re.match(r"[A-Za-z]:", text)) or ".." in parts
        if write and outside:
            self.report.add("sandbox", f"the candidate writes {text} with {what}{at}, outside the working "
                                       f"directory: candidates may write only inside their scratch directory",
                            line)
        elif not write and (outside or text.endswith(".py")
                            or any(word in lowered for word in ("problem", "harness", "kforge", "reference"))):
            if text.startswith(("/sys/devices/system/cpu", "/proc/cpuinfo")):
                return
            self.report.add("sandbox", f"the candidate reads {text} with {what}{at}: reading the problem, the "
                                       f"harness or files outside the working directory is rejected", line)

    def _environment(self, node: ast.AST, key: ast.AST | None, write: bool, bulk: bool) -> None:
        line, at = _line(node), _at(node)
        verb = "sets" if write else "reads"
        if bulk:
            self.report.add("sandbox", f"the candidate {verb} the whole environment{at}: candidates run with a "
                                       f"scrubbed environment and may not read or change it; remove it", line)
            return
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            if key.value in self.policy["environment_keys"]:
                self.report.add("sandbox", f"the candidate {verb} the build setting {key.value}{at}",
                                line, "note")
            else:
                self.report.add("sandbox", f"the candidate {verb} the environment variable {key.value}{at}: "
                                           f"candidates run with a scrubbed environment and may not read secrets "
                                           f"or settings; remove it", line)
            return
        self.report.add("sandbox", f"the candidate {verb} an environment variable by a computed name{at}: "
                                   f"candidates may not read or change the environment; remove it", line)

    def _matmul_precision(self, node: ast.Call) -> None:
        value = node.args[0] if node.args else _call_argument(node, "precision", None)
        if isinstance(value, ast.Constant) and value.value == "highest":
            self.report.add("global-state", f"the candidate calls torch.set_float32_matmul_precision{_at(node)}: "
                                            f"changing global torch state is not part of a kernel; remove it",
                            _line(node))
        else:
            self.report.add("precision", f"the candidate calls torch.set_float32_matmul_precision("
                                         f"{ast.unparse(value) if value is not None else ''}){_at(node)}: it "
                                         f"lets float32 matmuls run in TF32/bfloat16; remove it", _line(node),
                            self.policy["precision_downgrade"])

    def _triton_dot(self, node: ast.Call) -> None:
        if self.run_dtype != "float32":
            return
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg == "input_precision" and isinstance(value, ast.Constant) and value.value in ("ieee",):
                return
            if keyword.arg == "allow_tf32" and isinstance(value, ast.Constant) and value.value is False:
                return
        self.report.add("precision", f"tl.dot{_at(node)} uses TF32 for float32 inputs by default; pass "
                                     f"input_precision=\"ieee\" if the kernel should keep full float32",
                        _line(node), self.policy["native_low_precision"])

    def _cast(self, node: ast.Call) -> None:
        """Casts below the run precision: x.half(), x.to(torch.float16), dtype=torch.bfloat16."""
        func = node.func
        target: str | None = None
        if isinstance(func, ast.Attribute) and func.attr in ("half", "bfloat16") and not node.args:
            target = "float16" if func.attr == "half" else "bfloat16"
        elif isinstance(func, ast.Attribute) and func.attr in ("to", "type", "type_as"):
            for argument in node.args:
                target = target or _dtype_of(argument, self.module)
        for keyword in node.keywords:
            if keyword.arg == "dtype":
                target = target or _dtype_of(keyword.value, self.module)
        if target is None or _RANK[target] >= _RANK.get(self.run_dtype, 2):
            return
        if self.run_dtype == "float16" and target == "float16":
            return
        if self._guarded_by_dtype(node):
            return
        self.report.add("precision", f"the candidate casts to {target} with `{ast.unparse(node)}`{_at(node)} while "
                                     f"the run precision is {self.precision}: lower-precision arithmetic can "
                                     f"pass a loose tolerance while losing accuracy; keep "
                                     f"{self.run_dtype} arithmetic", _line(node),
                        self.policy["precision_downgrade"])

    def _guarded_by_dtype(self, node: ast.AST) -> bool:
        """True inside ``if x.dtype == torch.float16:`` (a branch for inputs of that dtype)."""
        current = node
        while current in self.module.parents:
            parent = self.module.parents[current]
            if isinstance(parent, ast.If) and current in parent.body:
                test = ast.unparse(parent.test)
                if "dtype" in test and any(word in test for word in ("float16", "half", "bfloat16")):
                    return True
            current = parent
        return False

    # -- assignments and patches -----------------------------------------------------------

    def _target(self, target: ast.AST, node: ast.AST, value: ast.AST | None) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element, node, None)
        elif isinstance(target, ast.Attribute):
            qual = self.qual(target)
            if qual:
                self._patch(node, qual, value)
        elif isinstance(target, ast.Subscript):
            base = self.qual(target.value)
            if base == "sys.modules":
                self.report.add("timer-patch", f"the candidate edits sys.modules{_at(node)}: replacing loaded "
                                               f"modules patches the harness; remove it", _line(node))
            elif base == "os.environ":
                self._environment(node, target.slice, write=True, bulk=False)
            elif base and base.endswith(".__dict__"):
                self._patch(node, f"{base[: -len('.__dict__')]}.{ast.unparse(target.slice)}", value)
            elif isinstance(target.value, ast.Name) and target.value.id == "__builtins__":
                self._patch(node, "builtins", value)
            elif isinstance(target.value, ast.Call) and self.qual(target.value.func) == "builtins.vars" \
                    and target.value.args and self.qual(target.value.args[0]):
                self._patch(node, f"{self.qual(target.value.args[0])}.{ast.unparse(target.slice)}", value)

    def _setattr(self, node: ast.Call) -> None:
        if len(node.args) < 2:
            return
        owner = self.qual(node.args[0])
        if owner is None:
            return
        name = node.args[1]
        attribute = name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else "<computed>"
        self._patch(node, f"{owner}.{attribute}", node.args[2] if len(node.args) > 2 else None)

    def _patch(self, node: ast.AST, qual: str, value: ast.AST | None = None) -> None:
        line, at = _line(node), _at(node)
        if qual.startswith("torch.backends."):
            last = qual.rsplit(".", 1)[1]
            lowers = isinstance(value, ast.Constant) and value.value in (True, "tf32", "bf16")
            if last in _PRECISION_FLAGS and lowers:
                self.report.add("precision", f"the candidate sets {qual} = {ast.unparse(value)}{at}: it lets "
                                             f"float32 matmuls or convolutions run in reduced precision; remove "
                                             f"it", line, self.policy["precision_downgrade"])
            else:
                self.report.add("global-state", f"the candidate sets {qual}{at}: global torch state changes "
                                                f"are not part of a kernel and skew the comparison; remove the "
                                                f"assignment", line)
            return
        if qual in ("sys.stdout", "sys.stderr", "sys.dont_write_bytecode"):
            self.report.add("timer-patch", f"the candidate replaces {qual}{at}", line, "note")
            return
        if qual.startswith(_TIMING_TARGETS) or qual.startswith(("time.", "timeit.")):
            self.report.add("timer-patch", f"the candidate replaces {qual}{at}: the harness's timing and "
                                           f"synchronisation functions must stay untouched; remove the "
                                           f"assignment", line)
            return
        what = "the builtin " + qual.split(".", 1)[1] if qual.startswith("builtins.") else qual
        self.report.add("timer-patch", f"the candidate replaces {what}{at}: a candidate may not modify modules "
                                       f"it did not define (torch, time, builtins, the harness); remove the "
                                       f"assignment", line)

    def _sys_modules_method(self, node: ast.Call, method: str) -> None:
        if method in ("pop", "update", "setdefault", "clear", "__setitem__", "__delitem__", "popitem"):
            self.report.add("timer-patch", f"the candidate edits sys.modules with .{method}(){_at(node)}: "
                                           f"replacing loaded modules patches the harness; remove it", _line(node))
        else:
            first = node.args[0] if node.args else None
            if method == "get" and isinstance(first, ast.Constant) and isinstance(first.value, str) \
                    and first.value != "__main__" and not first.value.startswith("kforge"):
                return
            self.report.add("harness-read", f"the candidate searches sys.modules with .{method}(){_at(node)}: "
                                            f"a candidate may not reach into the harness's modules; remove it",
                            _line(node))

    # -- classes, attributes, decorators ---------------------------------------------------

    def _class(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            qual = self.qual(base)
            if qual in _TENSOR_BASES:
                kind = "a torch.Tensor subclass" if "Mode" not in qual else f"a {qual.rsplit('.', 1)[1]}"
                self.report.add("deferred-work", f"the candidate defines {node.name}, {kind}{_at(node)}: outputs "
                                                 f"must be plain torch.Tensor objects with real storage, and the "
                                                 f"harness's torch calls may not be intercepted; remove it",
                                _line(node))
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and item.name in ("__torch_function__", "__torch_dispatch__"):
                self.report.add("deferred-work", f"{node.name} defines {item.name}{_at(item)}: it intercepts torch "
                                                 f"calls (lazy results, rewritten comparisons); remove it",
                                _line(item))

    def _attribute(self, node: ast.Attribute) -> None:
        if node.attr in _FRAME_ATTRIBUTES:
            self.report.add("harness-read", f"the candidate reads `{ast.unparse(node)}`{_at(node)}, interpreter "
                                            f"internals that reach the harness's frames and objects; remove it",
                            _line(node))
            return
        self._module_object(node)

    def _module_object(self, node: ast.Name | ast.Attribute) -> None:
        """Uses of os.environ and sys.modules, however they were imported."""
        qual = self.qual(node)
        parent = self.module.parents.get(node)
        if qual == "os.environ":
            self._environ_use(node, parent)
        elif qual == "sys.modules" and isinstance(parent, ast.Subscript) and parent.value is node:
            key = parent.slice
            if isinstance(parent.ctx, (ast.Store, ast.Del)):
                return  # reported as an assignment
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value != "__main__" \
                    and not key.value.startswith("kforge"):
                return
            if isinstance(key, ast.Name) and key.id == "__name__":
                return
            self.report.add("harness-read", f"the candidate looks up `{ast.unparse(parent)}`{_at(node)}: a "
                                            f"candidate may not reach into the harness's modules; remove it",
                            _line(node))
        elif qual == "sys.modules" and not isinstance(parent, ast.Attribute):
            self.report.add("harness-read", f"the candidate reads sys.modules{_at(node)}: a candidate may not "
                                            f"reach into the harness's modules; remove it", _line(node))

    def _environ_use(self, node: ast.AST, parent: ast.AST | None) -> None:
        if isinstance(parent, ast.Subscript) and parent.value is node:
            if isinstance(parent.ctx, ast.Load):
                self._environment(node, parent.slice, write=False, bulk=False)
            return  # stores are reported as assignments
        if isinstance(parent, ast.Attribute) and parent.value is node:
            call = self.module.parents.get(parent)
            method = parent.attr
            key = call.args[0] if isinstance(call, ast.Call) and call.args else None
            if method in ("get", "__getitem__", "__contains__"):
                self._environment(node, key, write=False, bulk=False)
            elif method in ("setdefault", "pop", "__setitem__", "__delitem__"):
                self._environment(node, key, write=True, bulk=False)
            else:
                self._environment(node, None, write=method in ("update", "clear", "popitem"), bulk=True)
            return
        if isinstance(parent, ast.Compare) and parent.left is not node:
            self._environment(node, parent.left, write=False, bulk=False)
            return
        self._environment(node, None, write=False, bulk=True)

    def _decorators(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            qual = self.qual(target)
            if qual in _TORCH_COMPILERS and not isinstance(decorator, ast.Call):
                self.report.add("torch-fallback", f"{node.name} is compiled with {ast.unparse(target)}{_at(node)}: "
                                                  f"code generated from PyTorch ops is a PyTorch fallback; write "
                                                  f"the kernel yourself", _line(node))

    def _side_stream_summary(self) -> None:
        if not self.stream_sites:
            return
        first = min(self.stream_sites, key=lambda item: _line(item) or 0)
        joined = [site for site in self.join_sites if _line(site)]
        tail = (f"; it is joined back at line {_line(joined[0])}" if joined else
                "; no wait_stream/synchronize joins it back")
        self.report.add("side-stream", f"the candidate uses a non-default CUDA stream (`{ast.unparse(first)}`)"
                                       f"{_at(first)}{tail}: work left on a side stream escapes the timer, so "
                                       f"the dynamic check compares event time with wall time", _line(first),
                        "note")


def _constant_path(node: ast.AST, module: _Module) -> str | None:
    if isinstance(node, ast.Call):
        qual = _qualname(node.func, module.aliases)
        if qual in ("os.path.join", "pathlib.Path", "pathlib.PurePath", "posixpath.join"):
            parts = [_constant_path(argument, module) for argument in node.args]
            return "/".join(parts) if parts and all(part is not None for part in parts) else None
        if qual in ("os.path.expanduser", "os.path.abspath", "os.path.realpath", "os.path.normpath",
                    "builtins.str", "os.fspath"):
            inner = _constant_path(node.args[0], module) if node.args else None
            if inner is not None and qual in ("os.path.abspath", "os.path.realpath"):
                return inner if inner.startswith("/") else inner
            return inner
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _constant_path(node.left, module), _constant_path(node.right, module)
        return f"{left}/{right}" if left is not None and right is not None else None
    segments = _resolve_text(node, module)
    if segments is None:
        return None
    return "".join(text for text, _ in segments)


# ---------------------------------------------------------------------------------------------
# Native sources (C++/CUDA strings handed to load_inline)
# ---------------------------------------------------------------------------------------------

_NATIVE_MARKERS = ("#include", "__global__", "__device__", "PYBIND11_MODULE", "TORCH_LIBRARY",
                   "torch::Tensor", "at::Tensor", 'extern "C"')

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

_CPP_GLUE = frozenset("""
empty empty_like empty_strided zeros zeros_like ones ones_like full full_like from_blob arange tensor
scalar_tensor dtype device layout requires_grad get_num_threads parallel_for parallel_reduce
get_thread_num init_num_threads in_parallel_region globalContext elementSize toString
typeMetaToScalarType scalarTypeToTypeMeta isFloatingType isIntegralType isComplexType
get_default_dtype device_of getCurrentCUDAStream getDefaultCUDAStream getCurrentDeviceProperties
getDeviceProperties current_device device_count set_device warp_size check_size_nonnegative
""".split())
_CPP_COMPUTE_NAMESPACES = frozenset({"native", "_ops", "nn", "fft", "linalg", "special", "sparse",
                                     "nested", "functional", "mps", "meta", "compositeexplicitautograd",
                                     "compositeimplicitautograd", "compositeexplicitautogradnonfunctional"})
_CPP_QUALIFIED_CALL = re.compile(r"\b(at|torch|c10)((?:\s*::\s*[A-Za-z_]\w*)+)\s*(?:<[^;(){}<>]*>)?\s*\(")
_CPP_METHOD_CALL = re.compile(r"[\w\)\]]\s*(?:\.|->)\s*([A-Za-z_]\w*)\s*\(")
_CPP_INCLUDE = re.compile(r"#\s*include\s*[<\"]([^>\"]+)[>\"]")
_CPP_PYBIND_NAME = re.compile(r"\.\s*def\s*\(\s*\"([A-Za-z_]\w*)")

_CPP_SIDE_STREAM = re.compile(r"\bcudaStreamCreate\w*\s*\(|getStreamFromPool\s*\(|\bcudaStreamPerThread\b|"
                              r"\bcudaStreamNonBlocking\b|\bcuStreamCreate\w*\s*\(")
_CPP_JOIN = re.compile(r"\bcudaStreamWaitEvent\s*\(|\bcudaStreamSynchronize\s*\(|\bcudaDeviceSynchronize\s*\(|"
                       r"\bcudaEventSynchronize\s*\(|\.\s*synchronize\s*\(|wait_stream|\bcuStreamWaitEvent\s*\(")
_CPP_L2_PERSIST = re.compile(r"\bcudaLimitPersistingL2CacheSize\b|\bcudaStreamAttributeAccessPolicyWindow\b|"
                             r"\baccessPolicyWindow\b|\bcudaAccessPropertyPersisting\b|"
                             r"\bcudaLaunchAttributeAccessPolicyWindow\b|\bcudaKernelNodeAttributeAccessPolicyWindow\b|"
                             r"\bCU_LIMIT_PERSISTING_L2_CACHE_SIZE\b")
_CPP_CONTEXT_SETTER = re.compile(r"\bglobalContext\s*\(\s*\)\s*\.\s*(set\w+)\s*\(")
_CPP_GLOBAL_NOTES = re.compile(r"\bomp_set_num_threads\s*\(|\bcudaDeviceSetLimit\s*\(|\bcudaDeviceSetCacheConfig\s*\(|"
                               r"\bcudaDeviceSetSharedMemConfig\s*\(|\bcudaSetDevice\s*\(|\bcudaDeviceSetMemPool\s*\(|"
                               r"\bcudaMemPoolSetAttribute\s*\(")
_CPP_GLOBAL_REJECT = re.compile(r"\bcudaDeviceReset\s*\(|\b(?:at|torch)\s*::\s*set_num_threads\s*\(|"
                                r"\bcudaCtxResetPersistingL2Cache\b(?!\s*\()")
_CPP_TYPE_DOWNGRADE = re.compile(r"\.\s*to\s*\(\s*(?:torch|at|c10)\s*::\s*k(?:Half|BFloat16|Float8\w*)\b|"
                                 r"\.\s*(?:half|bfloat16)\s*\(\s*\)|toType\s*\(\s*(?:torch|at|c10)\s*::\s*k(?:Half|BFloat16)")
_CPP_LOW_PRECISION = re.compile(r"__float2half\w*|__floats2half2\w*|__float22half2\w*|__float2bfloat16\w*|"
                                r"__floats2bfloat162\w*|__nv_fp8\w*|__nv_cvt_float\w*_to_fp8\w*|\bwmma\s*::|"
                                r"\bmma\.sync\b|\bwgmma\b|__float_to_tf32|\bcvt\.rna\.tf32|\bnvcuda::wmma")
_CPP_MATH_MODES = re.compile(r"\bCUBLAS_TF32_TENSOR_OP_MATH\b|\bCUBLAS_COMPUTE_32F_FAST_\w+|\bCUBLAS_COMPUTE_16F\b|"
                             r"\bCUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION\b|\bCUBLAS_TENSOR_OP_MATH\b|"
                             r"\bCUBLASLT_\w*FAST\w*")
_CPP_SANDBOX = re.compile(r"(?<![\w:.>])(?:std\s*::\s*)?(system|popen|fork|vfork|execv\w*|execl\w*|socket|"
                          r"getenv|secure_getenv|setenv|putenv|kill|ptrace)\s*\(")
_CPP_FILE_WRITE = re.compile(r"\bstd\s*::\s*ofstream\b|\bfopen\s*\(|\bcreat\s*\(")
_CPP_HARNESS = re.compile(r"\bprocess_vm_readv\s*\(|\bprocess_vm_writev\s*\(|/proc/self/mem|/proc/\d+/mem|"
                          r"/proc/self/maps")
_CPP_PYTHON = re.compile(r"\bpy(?:bind11)?\s*::\s*module_?\s*::\s*import\s*\(|\bPyImport_\w+\s*\(|\bPyRun_\w+\s*\(|"
                         r"\bPyEval_\w+\s*\(|\bpy(?:bind11)?\s*::\s*(?:eval|exec)\w*\s*[<(]|\.\s*attr\s*\(|"
                         r"\bPyObject_GetAttrString\s*\(|\bPyObject_Call\w*\s*\(")
_CPP_THREAD = re.compile(r"\bstd\s*::\s*(?:thread|jthread|async)\b|\bpthread_create\s*\(")
_CPP_DETACH = re.compile(r"\.\s*detach\s*\(\s*\)|\bpthread_detach\s*\(|std\s*::\s*launch\s*::\s*async")
_CPP_INTERPOSE = re.compile(r"\b(?:cudaError_t|CUresult|int|void|float)\s+(cudaEventElapsedTime|cudaEventRecord|"
                            r"cudaEventSynchronize|cudaDeviceSynchronize|cudaStreamSynchronize|clock_gettime|"
                            r"gettimeofday|cuEventElapsedTime|cudaEventQuery)\s*\([^;{}]*\)\s*\{|"
                            r"\bdlsym\s*\(\s*RTLD_NEXT|LD_PRELOAD")


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
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in used \
                and any(marker in node.value for marker in _NATIVE_MARKERS):
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
            self.report.add("side-stream", f"load_inline{at} compiles with a per-thread default stream: kernels "
                                           f"then run off PyTorch's current stream, so the dynamic check "
                                           f"decides whether the timing holds", line, "note")
        if self.fp32 and re.search(r"(?:^|\s)-{1,2}(?:use_fast_math|ffast-math)\b", text):
            self.report.add("precision", f"load_inline{at} compiles with fast math ({keyword}): approximate "
                                         f"exp/div/sqrt lower float32 accuracy; the float64 error profile decides",
                            line, self.policy["native_low_precision"])

    def scan(self, source: _NativeSource) -> None:
        code, commentless = source.code, source.without_comments
        self._aten(source, code)
        self._vendors(source, code)
        self._streams(source, code)
        self._global_state(source, code)
        self._precision(source, code)
        self._sandbox(source, code, commentless)

    def _add(self, check: str, source: _NativeSource, offset: int, message: str, severity: str = "reject") -> None:
        line = source.line(offset)
        at = f" (line {line})" if line is not None else ""
        self.report.add(check, message.replace("{at}", at), line, severity)

    def _aten(self, source: _NativeSource, code: str) -> None:
        allowed = self.policy["aten_compute_in_native"]
        severity = "note" if allowed else "reject"
        tail = ("" if allowed else f": an extension that calls ATen's op is a PyTorch fallback under the policy "
                                   f"`{self.policy['name']}`; compute it in your own kernel")
        for match in _CPP_QUALIFIED_CALL.finditer(code):
            root = match.group(1)
            chain = [part.strip() for part in match.group(2).split("::") if part.strip()]
            name, namespaces = chain[-1], chain[:-1]
            spelled = f"{root}::{'::'.join(chain)}"
            if root == "c10" or "blas" in namespaces:
                continue
            compute = (namespaces and namespaces[0] in _CPP_COMPUTE_NAMESPACES) or name in COMPUTE_FUNCTIONS \
                or (not namespaces and name.startswith("_") and not name.startswith("__"))
            if compute:
                self._add("library-policy", source, match.start(), f"the C++ source calls {spelled}{{at}}{tail}",
                          severity)
            elif not namespaces and name[:1].islower() and name not in _CPP_GLUE and name != "set_num_threads":
                self._add("library-policy", source, match.start(),
                          f"the C++ source calls {spelled}{{at}}, which the guard does not know; make sure it is "
                          f"not an ATen compute op", "note")
        for match in _CPP_METHOD_CALL.finditer(code):
            name = match.group(1)
            if name in COMPUTE_TENSOR_METHODS and not name.startswith("__"):
                self._add("library-policy", source, match.start(1),
                          f"the C++ source calls the tensor method .{name}(){{at}}{tail}", severity)

    def _vendors(self, source: _NativeSource, code: str) -> None:
        allowed = self.policy["vendor_libraries"]
        for library, display, pattern in _VENDOR_PATTERNS:
            match = re.search(pattern, code)
            if match is None or library in self.libraries_seen:
                continue
            self.libraries_seen.add(library)
            spelled = match.group(0).rstrip("( ").strip()
            if library in allowed:
                self._add("library-policy", source, match.start(),
                          f"the C++ source uses {display} ({spelled}){{at}}, which the policy "
                          f"`{self.policy['name']}` allows", "note")
            else:
                allowed_text = ("allows no vendor libraries" if not allowed else
                                "allows only " + ", ".join(_LIBRARY_NAMES[item] for item in allowed))
                self._add("library-policy", source, match.start(),
                          f"the C++ source calls {display} ({spelled}){{at}}: the policy "
                          f"`{self.policy['name']}` {allowed_text}; write the kernel yourself")

    def _streams(self, source: _NativeSource, code: str) -> None:
        match = _CPP_SIDE_STREAM.search(code)
        if match:
            joined = _CPP_JOIN.search(code)
            tail = "; it is joined back" if joined else "; nothing joins it back to the current stream"
            self._add("side-stream", source, match.start(),
                      f"the C++ source uses a non-default CUDA stream ({match.group(0).rstrip('( ')}){{at}}{tail}: "
                      f"work left on a side stream escapes the timer, so the dynamic check compares event time "
                      f"with wall time", "note")

    def _global_state(self, source: _NativeSource, code: str) -> None:
        match = _CPP_L2_PERSIST.search(code)
        if match:
            self._add("global-state", source, match.start(),
                      f"the C++ source sets up persisting L2 cache ({match.group(0)}){{at}}: a persisting window "
                      f"survives the harness's L2 flush between timed calls; remove it")
        for match in _CPP_CONTEXT_SETTER.finditer(code):
            setter = match.group(1)
            if any(word in setter for word in ("TF32", "Float32MatmulPrecision", "ReductionCuBLAS")):
                self._add("precision", source, match.start(),
                          f"the C++ source calls globalContext().{setter}(){{at}}: it lets float32 matmuls or "
                          f"convolutions run in reduced precision; remove it", self.policy["precision_downgrade"])
            else:
                self._add("global-state", source, match.start(),
                          f"the C++ source calls globalContext().{setter}(){{at}}: global torch state changes "
                          f"are not part of a kernel and skew the comparison; remove it")
        for match in _CPP_GLOBAL_REJECT.finditer(code):
            self._add("global-state", source, match.start(),
                      f"the C++ source calls {match.group(0).rstrip('( ')}{{at}}: it changes state the harness "
                      f"and the baseline share; remove it")
        for match in _CPP_GLOBAL_NOTES.finditer(code):
            self._add("global-state", source, match.start(),
                      f"the C++ source calls {match.group(0).rstrip('( ')}{{at}}, a process-wide setting", "note")

    def _precision(self, source: _NativeSource, code: str) -> None:
        if not self.fp32:
            return
        match = _CPP_TYPE_DOWNGRADE.search(code)
        if match:
            self._add("precision", source, match.start(),
                      f"the C++ source casts a tensor to lower precision ({match.group(0).strip()}){{at}} while "
                      f"the run precision is {self.precision}; keep float32 arithmetic",
                      self.policy["precision_downgrade"])
        for pattern, what in ((_CPP_LOW_PRECISION, "half/bfloat16/TF32 arithmetic"),
                              (_CPP_MATH_MODES, "a reduced-precision math mode")):
            match = pattern.search(code)
            if match:
                self._add("precision", source, match.start(),
                          f"the C++ source uses {what} ({match.group(0)}){{at}} while the run precision is "
                          f"{self.precision}; the float64 error profile shows what it costs",
                          self.policy["native_low_precision"])

    def _sandbox(self, source: _NativeSource, code: str, commentless: str) -> None:
        for match in _CPP_SANDBOX.finditer(code):
            self._add("sandbox", source, match.start(1),
                      f"the C++ source calls {match.group(1)}(){{at}}: candidates may not start processes, open "
                      f"sockets, read the environment or signal processes; remove it")
        match = _CPP_FILE_WRITE.search(code)
        if match:
            self._add("sandbox", source, match.start(),
                      f"the C++ source opens files ({match.group(0).rstrip('( ')}){{at}}; writing outside the "
                      f"working directory or reading the harness's files is rejected at run time", "note")
        match = _CPP_HARNESS.search(commentless)
        if match:
            self._add("harness-read", source, match.start(),
                      f"the C++ source reads process memory ({match.group(0).rstrip('( ')}){{at}}: reading the "
                      f"harness's state is rejected; remove it")
        match = _CPP_PYTHON.search(code)
        if match:
            self._add("library-policy", source, match.start(),
                      f"the C++ source calls back into Python ({match.group(0).rstrip('( <')}){{at}}, out of the "
                      f"guard's sight; pass what the kernel needs as arguments instead")
        match = _CPP_THREAD.search(code)
        if match:
            detached = _CPP_DETACH.search(code)
            self._add("deferred-work", source, match.start(),
                      f"the C++ source starts threads ({match.group(0)}){{at}}" +
                      (": a detached thread or async task can finish after forward returns; join it before "
                       "returning" if detached else "; they must be joined before forward returns"),
                      "reject" if detached else "note")
        match = _CPP_INTERPOSE.search(commentless)
        if match:
            self._add("timer-patch", source, match.start(),
                      f"the C++ source defines or interposes a timing function ({match.group(0)[:60].strip()})"
                      f"{{at}}: the harness's timing must stay untouched; remove it")

    def kernel_names(self, source: _NativeSource) -> set[str]:
        return set(_CPP_PYBIND_NAME.findall(source.without_comments))


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def _check_model_new(module: _Module, report: _Report, classes: dict[str, _ClassInfo]) -> _ClassInfo | None:
    if "ModelNew" not in module.classes:
        for node in module.tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ModelNew"
                                                    for t in node.targets):
                value = ast.unparse(node.value)
                if isinstance(node.value, ast.Name) and node.value.id in module.reference_names or \
                        value.split(".")[-1] == "Model":
                    report.add("silent-fallback", f"ModelNew is the reference Model ({value}){_at(node)}: define "
                                                  f"a ModelNew whose forward runs the candidate's kernel", _line(node))
        imported = module.aliases.get("ModelNew", "")
        if imported.endswith(".Model"):
            report.add("silent-fallback", f"ModelNew is imported as the reference {imported}: define a ModelNew "
                                          f"whose forward runs the candidate's kernel", None)
        return None
    info = _class_info(module, "ModelNew", classes)
    if info is None:
        return None
    node = info.node

    def inherits_reference(class_node: ast.ClassDef, depth: int = 0) -> bool:
        for base in class_node.bases:
            if isinstance(base, ast.Name) and base.id in module.reference_names:
                return True
            if isinstance(base, ast.Name) and base.id in module.classes and depth < 8 \
                    and inherits_reference(module.classes[base.id], depth + 1):
                return True
        return False

    if "forward" not in info.methods:
        bound = [item for item in node.body if isinstance(item, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == "forward" for t in item.targets)]
        if bound:
            report.add("silent-fallback", f"ModelNew.forward is bound to {ast.unparse(bound[0].value)}"
                                          f"{_at(bound[0])}: define a forward that runs the candidate's kernel",
                       _line(bound[0]))
        elif inherits_reference(node):
            report.add("silent-fallback", f"ModelNew inherits forward from the reference Model{_at(node)}: define "
                                          f"a forward that runs the candidate's kernel", _line(node))
        else:
            report.add("silent-fallback", f"ModelNew defines no forward{_at(node)}: define one that runs the "
                                          f"candidate's kernel", _line(node))
    return info


def analyze(candidate_source: str, policy: str | Mapping[str, Any] | None = None, *,
            precision: str = "fp32", backend: str | None = None) -> list[dict[str, Any]]:
    """Check a candidate's source; return findings ``{check, severity, message, line}``.

    ``policy`` is a policy name, JSON text or dict (see :mod:`kforge_worker.policy`).
    ``precision`` is the run precision (``fp32``/``fp16``/``bf16``), which decides what counts as a
    downgrade. ``backend`` (``cuda``/``triton``/``cpu``) is recorded for callers and does not change
    the checks: every source is checked the same way. Nothing in the candidate is executed.
    """
    del backend
    resolved = load_policy(policy)
    report = _Report(resolved)
    try:
        tree = ast.parse(candidate_source)
    except (SyntaxError, ValueError) as error:
        line = getattr(error, "lineno", None)
        detail = getattr(error, "msg", None) or str(error)
        report.add("syntax", f"the candidate is not valid Python ({detail}"
                             f"{f', line {line}' if line else ''}): fix the syntax error", line, "note")
        return report.finish()
    except RecursionError:
        report.add("guard-error", "the candidate is nested too deeply to parse: simplify the code", None)
        return report.finish()
    try:
        module = _build_module(tree)
        sources, flags = _native_sources(module)
        scanner = _NativeScanner(report, resolved, precision)
        for source in sources:
            module.kernel_names |= scanner.kernel_names(source)
        classes: dict[str, _ClassInfo] = {}
        info = _check_model_new(module, report, classes)
        walker = _ForwardWalker(module, report, resolved, classes)
        if info is not None:
            walker.run(info)
        _ModuleChecker(module, report, resolved, precision).run()
        for call, keyword, text in flags:
            scanner.flags(call, keyword, text)
        for source in sources:
            scanner.scan(source)
        if info is not None and walker.kernel_calls == 0 and (module.builders or module.triton_kernels):
            first = module.builders[0] if module.builders else module.functions[sorted(module.triton_kernels)[0]]
            report.add("torch-fallback", f"the candidate builds a kernel{_at(first)} but forward never calls it: "
                                         f"the work must run in the candidate's own kernel", _line(first), "note")
    except RecursionError:
        report.add("guard-error", "the candidate is nested too deeply for the guard to analyse: simplify the "
                                  "code", None)
    return report.finish()


def rejections(findings: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The ``reject`` findings as SPEC.md verdict reasons ``{check, message}``."""
    return [{"check": item["check"], "message": item["message"]} for item in findings
            if item["severity"] == "reject"]


def analyze_file(path: str, policy: str | Mapping[str, Any] | None = None, *,
                 precision: str = "fp32") -> list[dict[str, Any]]:
    """:func:`analyze` on a file read as UTF-8 (undecodable bytes become a ``syntax`` finding)."""
    with open(path, "rb") as handle:
        raw = handle.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return [{"check": "syntax", "severity": "note", "line": None,
                 "message": f"the candidate is not UTF-8 text (byte {error.start}): save it as UTF-8"}]
    return analyze(text, policy, precision=precision)


def main(argv: list[str] | None = None) -> int:
    """``python -m kforge_worker.static_guard FILE [POLICY] [PRECISION]``: print findings as JSON."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m kforge_worker.static_guard CANDIDATE.py [POLICY] [PRECISION]", file=sys.stderr)
        return 2
    findings = analyze_file(args[0], args[1] if len(args) > 1 else None,
                            precision=args[2] if len(args) > 2 else "fp32")
    print(json.dumps(findings, indent=2))
    return 1 if rejections(findings) else 0


if __name__ == "__main__":
    raise SystemExit(main())
