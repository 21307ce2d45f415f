"""Name tables of the static guard: the check ids and what counts as compute, glue, timing, sandbox,
concurrency, precision and global-state calls.
"""

from __future__ import annotations

import ast
import builtins
from typing import Iterable

from ...backends.registry import STREAM_CALLS


#: Stable check ids and what each one catches.
CHECKS: dict[str, str] = {
    "syntax": "the candidate is not valid Python (the worker reports invalid_input)",
    "guard-error": "the candidate is too deeply nested for the guard to analyse",
    "torch-fallback": "forward does its work with PyTorch compute (torch.*, F.*, tensor methods, "
    "operators, torch.nn modules, the reference Model; torch.compile and torch.jit are notes)",
    "silent-fallback": "a PyTorch path in an except handler, or a ModelNew that inherits or lacks forward",
    "timer-patch": "assignments to timing functions, modules, builtins or sys.modules",
    "harness-read": "frame inspection, gc object scans, raw memory reads, imports of the harness",
    "sandbox": "secret or bulk environment reads, code-injecting environment writes, network, subprocesses, "
    "writes outside the cwd, dynamic code (other environment reads and writes are notes)",
    "deferred-work": "threads, executors, processes, tensor subclasses, __torch_function__ hooks",
    "side-stream": "non-default CUDA streams (a note: the dynamic check decides)",
    "result-cache": "caches keyed on sampled values or content digests (keys on data_ptr/id/hash and "
    "lru_cache on tensor functions are notes: the timed outputs decide)",
    "phase-detect": "call counters a branch reads, clock reads and grad/inference-mode checks in forward",
    "precision": "casts below the run precision, TF32/reduced-precision switches, autocast",
    "global-state": "torch.backends switches the run-time snapshot does not read, persisting-L2 windows "
    "(seeds, thread counts and the switches it reads are notes: the run time decides)",
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
    f"__{op}__"
    for op in (
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
    "torch.nn.functional.",
    "torch._C._nn.",
    "torch._C._VariableFunctions.",
    "torch.ops.aten.",
    "torch.ops.prims.",
    "torch._ops.ops.aten.",
    "torch._refs.",
    "torch._prims.",
    "torch.linalg.",
    "torch.fft.",
    "torch.special.",
    "torch.sparse.",
    "torch.nested.",
    "torch.masked.",
    "torch.distributions.",
    "torch.func.",
    "torch.nn.init.",
    "torch.nn.utils.",
    "torch.autograd.grad",
    "torch.utils.checkpoint.",
    "torch._C._linalg.",
    "torch._C._fft.",
    "torch._C._special.",
)
_TORCH_COMPILERS = (
    "torch.compile",
    "torch.jit.script",
    "torch.jit.trace",
    "torch.jit.trace_module",
    "torch._dynamo.optimize",
    "torch.fx.symbolic_trace",
)
_NN_NOT_COMPUTE = frozenset(
    {
        "Parameter",
        "ParameterList",
        "ParameterDict",
        "Module",
        "Identity",
        "UninitializedParameter",
        "UninitializedBuffer",
        "Buffer",
    }
)
_NN_CONTAINERS = frozenset({"ModuleList", "Sequential", "ModuleDict"})
_EXTENSION_BUILDERS = ("torch.utils.cpp_extension.load_inline", "torch.utils.cpp_extension.load")

_PHASE_CALLS = frozenset(
    {
        "torch.is_grad_enabled",
        "torch.is_inference_mode_enabled",
        "torch._C.is_grad_enabled",
        "torch._C._is_inference_mode_enabled",
        "torch.jit.is_scripting",
        "torch.jit.is_tracing",
        "torch._C._get_tracing_state",
        "torch.compiler.is_compiling",
        "torch._dynamo.is_compiling",
        "torch.cuda.is_current_stream_capturing",
        "torch.cuda.graphs.is_current_stream_capturing",
        "torch.autograd.grad_mode.is_grad_enabled",
        "torch.compiler.is_dynamo_compiling",
    }
)
_CLOCKS = frozenset(
    {
        "time.time",
        "time.perf_counter",
        "time.monotonic",
        "time.process_time",
        "time.thread_time",
        "time.time_ns",
        "time.perf_counter_ns",
        "time.monotonic_ns",
        "time.process_time_ns",
        "time.thread_time_ns",
        "time.clock_gettime",
        "time.clock_gettime_ns",
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
        "timeit.default_timer",
    }
)

_NETWORK_MODULES = frozenset(
    {
        "socket",
        "ssl",
        "urllib",
        "urllib2",
        "urllib3",
        "http",
        "httpx",
        "requests",
        "aiohttp",
        "ftplib",
        "smtplib",
        "poplib",
        "imaplib",
        "telnetlib",
        "xmlrpc",
        "websocket",
        "websockets",
        "paramiko",
        "grpc",
        "zmq",
        "boto3",
        "botocore",
        "asyncssh",
        "pycurl",
        "socketserver",
    }
)
_PROCESS_MODULES = frozenset({"subprocess", "pty", "pexpect", "sh", "plumbum"})
_CONCURRENCY_MODULES = frozenset(
    {"threading", "_thread", "concurrent", "multiprocessing", "asyncio", "torch.multiprocessing", "queue", "sched"}
)

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
_FRAME_ATTRIBUTES = frozenset(
    {"f_back", "f_locals", "f_globals", "f_builtins", "tb_frame", "gi_frame", "cr_frame", "ag_frame", "__subclasses__"}
)

_SUBPROCESS_CALLS = frozenset(
    {
        "os.system",
        "os.popen",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.posix_spawnp",
        "os.kill",
        "os.killpg",
        "os.setsid",
        "os.setpgrp",
        "os.setpgid",
        "os.chdir",
        "os.fchdir",
        "os.chroot",
        "signal.signal",
        "signal.alarm",
        "signal.setitimer",
        "signal.pthread_kill",
        "resource.setrlimit",
        "os.sched_setaffinity",
        "os.nice",
    }
)
_SUBPROCESS_PREFIXES = ("os.exec", "os.spawn", "subprocess.", "pty.", "pexpect.", "runpy.")
_DYNAMIC_CODE = frozenset(
    {
        "builtins.exec",
        "builtins.eval",
        "builtins.compile",
        "importlib.util.spec_from_file_location",
        "importlib.util.module_from_spec",
        "importlib.machinery.SourceFileLoader",
        "importlib.reload",
        "builtins.breakpoint",
        "code.interact",
        "pdb.set_trace",
    }
)
_FD_CALLS = frozenset(
    {
        "os.write",
        "os.fdopen",
        "os.dup",
        "os.dup2",
        "os.close",
        "os.closerange",
        "os.read",
        "os.sendfile",
        "os.set_inheritable",
        "os.ftruncate",
        "os.lseek",
    }
)
_WRITE_PATH_CALLS = {
    # qualified name: index of the path argument written to
    "os.remove": 0,
    "os.unlink": 0,
    "os.rename": 1,
    "os.replace": 1,
    "os.rmdir": 0,
    "os.removedirs": 0,
    "os.mkdir": 0,
    "os.makedirs": 0,
    "os.chmod": 0,
    "os.chown": 0,
    "os.symlink": 1,
    "os.link": 1,
    "os.truncate": 0,
    "os.utime": 0,
    "os.mkfifo": 0,
    "shutil.copy": 1,
    "shutil.copy2": 1,
    "shutil.copyfile": 1,
    "shutil.copytree": 1,
    "shutil.move": 1,
    "shutil.rmtree": 0,
    "torch.save": 1,
    "numpy.save": 0,
    "numpy.savez": 0,
    "pickle.dump": 1,
}
_READ_PATH_CALLS = {
    "os.listdir": 0,
    "os.scandir": 0,
    "os.walk": 0,
    "glob.glob": 0,
    "glob.iglob": 0,
    "torch.load": 0,
    "numpy.load": 0,
    "numpy.fromfile": 0,
    "linecache.getline": 0,
    "linecache.getlines": 0,
    "importlib.import_module": None,
}
_PATH_WRITE_METHODS = frozenset(
    {
        "write_text",
        "write_bytes",
        "unlink",
        "rename",
        "replace",
        "touch",
        "mkdir",
        "rmdir",
        "chmod",
        "symlink_to",
        "hardlink_to",
    }
)
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
_TENSOR_BASES = frozenset(
    {
        "torch.Tensor",
        "torch._C._TensorBase",
        "torch._C.TensorBase",
        "torch.nn.Parameter",
        "torch.nn.parameter.Parameter",
        "torch.utils._python_dispatch.TorchDispatchMode",
        "torch.overrides.TorchFunctionMode",
        "torch.utils._mode_utils",
    }
)
_SIDE_STREAM_CALLS = frozenset(
    {
        "torch.cuda.Stream",
        "torch.cuda.streams.Stream",
        "torch.cuda.ExternalStream",
        "torch.cuda.stream",
        "torch.cuda.set_stream",
        "torch.cuda.StreamContext",
        "torch.Stream",
        *STREAM_CALLS,  # the backends' own (backends/*/trace_names.py)
    }
)
_JOIN_METHODS = frozenset({"wait_stream", "wait_event", "synchronize"})

#: Calls that seed a random generator. The worker reseeds torch (every device), `random` and numpy
#: with the call's input seed before every call it makes (problem/inputs.py, `seed_everything`), so a
#: seed the candidate sets changes nothing that is judged: a note.
_SEED_CALLS = frozenset(
    {
        "torch.manual_seed",
        "torch.seed",
        "torch.cuda.manual_seed",
        "torch.cuda.manual_seed_all",
        "torch.cuda.seed",
        "torch.cuda.seed_all",
        "torch.random.manual_seed",
        "torch.random.seed",
        "random.seed",
        "numpy.random.seed",
        "torch.cuda.set_rng_state",
        "torch.set_rng_state",
    }
)
#: Calls whose effect the run-time snapshot of torch's global state reads back (guard/global_state.py,
#: `FLAGS`), each with the flag it changes: a note, the run time rejects a change (`global-state` or
#: `precision`) after the import, the construction, the correctness trials and the timed calls.
_RUNTIME_STATE_CALLS = {
    "torch.set_num_threads": "torch.get_num_threads()",
    "torch.set_num_interop_threads": "torch.get_num_interop_threads()",
    "torch.use_deterministic_algorithms": "torch.are_deterministic_algorithms_enabled()",
    "torch.set_deterministic_debug_mode": "torch.get_deterministic_debug_mode()",
    "torch.set_default_dtype": "torch.get_default_dtype()",
    "torch.set_default_tensor_type": "torch.get_default_dtype()",
    "torch.set_default_device": "the default device",
    "torch.set_flush_denormal": "denormals flushed to zero",
    "torch.set_grad_enabled": "torch.is_grad_enabled()",
    "torch.autograd.set_grad_enabled": "torch.is_grad_enabled()",
    "torch.autograd.set_detect_anomaly": "torch.is_anomaly_enabled()",
    "torch.cuda.set_sync_debug_mode": "torch.cuda.get_sync_debug_mode()",
    "torch.set_warn_always": "torch.is_warn_always_enabled()",
    "torch.backends.cudnn.flags": "torch.backends.cudnn.enabled/benchmark/deterministic/allow_tf32",
    "torch.backends.mkldnn.flags": "torch.backends.mkldnn.enabled",
    "torch.set_float32_matmul_precision": "torch.get_float32_matmul_precision()",
    "torch.set_autocast_enabled": "torch.is_autocast_enabled()",
}
#: Calls that limit only the candidate's own process: the reference and the baselines run in
#: processes of their own (a note).
_OWN_PROCESS_CALLS = frozenset(
    {
        "torch.cuda.set_per_process_memory_fraction",
        "torch.cuda.memory.set_per_process_memory_fraction",
    }
)
#: Every global-state call (set_float32_matmul_precision and set_autocast_enabled are judged as
#: precision calls, module_checker.py).
_GLOBAL_STATE_CALLS = (
    _SEED_CALLS
    | _OWN_PROCESS_CALLS
    | (frozenset(_RUNTIME_STATE_CALLS) - {"torch.set_float32_matmul_precision", "torch.set_autocast_enabled"})
)
#: `torch.backends` switches the run-time snapshot reads (guard/global_state.py, `FLAGS`; a test keeps
#: the two lists equal): assigning one is a note, a change it makes is rejected at run time.
_RUNTIME_STATE_FLAGS = frozenset(
    {
        "torch.backends.cuda.matmul.allow_tf32",
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
        "torch.backends.cuda.matmul.allow_fp16_accumulation",
        "torch.backends.cuda.matmul.fp32_precision",
        "torch.backends.cudnn.allow_tf32",
        "torch.backends.cudnn.fp32_precision",
        "torch.backends.cudnn.conv.fp32_precision",
        "torch.backends.cudnn.rnn.fp32_precision",
        "torch.backends.fp32_precision",
        "torch.backends.mkldnn.fp32_precision",
        "torch.backends.mkldnn.matmul.fp32_precision",
        "torch.backends.mkldnn.conv.fp32_precision",
        "torch.backends.mkldnn.rnn.fp32_precision",
        "torch.backends.cudnn.enabled",
        "torch.backends.cudnn.benchmark",
        "torch.backends.cudnn.deterministic",
        "torch.backends.mkldnn.enabled",
    }
)
#: Environment variables whose setting injects code into the processes a build starts (the
#: compiler, ninja) or changes the harness's own settings: setting one stays a `sandbox` rejection.
_INJECTING_ENVIRONMENT = frozenset({"LD_PRELOAD", "LD_AUDIT", "PYTHONSTARTUP", "PYTHONINSPECT", "BASH_ENV", "ENV"})
_HARNESS_ENVIRONMENT_PREFIXES = ("KFORGE_",)
_PRECISION_CALLS = frozenset(
    {
        "torch.autocast",
        "torch.cuda.amp.autocast",
        "torch.cpu.amp.autocast",
        "torch.amp.autocast",
        "torch.set_autocast_enabled",
    }
)
_PRECISION_FLAGS = (
    "allow_tf32",
    "allow_fp16_reduced_precision_reduction",
    "allow_bf16_reduced_precision_reduction",
    "fp32_precision",
)
_TIMING_TARGETS = (
    "torch.cuda.Event",
    "torch.cuda.synchronize",
    "torch.cuda.streams",
    "torch.cuda.Stream",
    "torch.Event",
    "torch.cuda.current_stream",
    "torch.cuda.default_stream",
    "torch.cuda.event",
    "torch.synchronize",
)

_RANK = {"float64": 3, "float32": 2, "float16": 1, "bfloat16": 1, "float8": 0}
_DTYPE_NAMES = {
    "torch.float16": "float16",
    "torch.half": "float16",
    "torch.bfloat16": "bfloat16",
    "torch.float32": "float32",
    "torch.float": "float32",
    "torch.float64": "float64",
    "torch.double": "float64",
    "torch.HalfTensor": "float16",
    "torch.cuda.HalfTensor": "float16",
    "torch.BFloat16Tensor": "bfloat16",
    "torch.cuda.BFloat16Tensor": "bfloat16",
}
#: The dtype each run precision holds arithmetic to; `native` holds none (the problem's own dtypes: its
#: casts are the kernel's business, and the float64 error profile judges what they cost).
_RUN_PRECISIONS = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64", "native": None}

_IDENTITY_METHODS = frozenset({"data_ptr", "_version", "_cdata", "__hash__", "storage_offset"})
_SAMPLING_METHODS = frozenset({"item", "tolist"})
_CONTAINER_FACTORIES = frozenset(
    {
        "builtins.dict",
        "builtins.list",
        "builtins.set",
        "collections.OrderedDict",
        "collections.defaultdict",
        "weakref.WeakKeyDictionary",
        "weakref.WeakValueDictionary",
        "collections.deque",
        "collections.Counter",
    }
)
_KEY_BUILDERS = frozenset(
    {
        "builtins.tuple",
        "builtins.str",
        "builtins.bytes",
        "builtins.repr",
        "builtins.frozenset",
        "builtins.int",
        "builtins.float",
        "builtins.round",
        "builtins.format",
        "builtins.hex",
    }
)
_CACHE_DECORATORS = frozenset({"functools.lru_cache", "functools.cache", "functools.cached_property"})

_BUILTIN_NAMES = frozenset(dir(builtins))

#: The symbol of each binary operator, for messages (`+` on tensors with PyTorch).
_OPERATORS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.MatMult: "@",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
}
