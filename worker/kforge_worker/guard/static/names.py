"""Name tables of the static guard: the check ids, the precision and global-state calls, and the
names forward's keys and caches are told by; the tables of compute are in compute_names.py, those
of the sandbox and the harness in sandbox_names.py.
"""

from __future__ import annotations

import ast
import builtins


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
