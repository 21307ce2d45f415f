"""Patterns and tables of the C++/CUDA sources the guard reads (native.py): what marks a source as
native, vendor libraries, ATen calls that are glue or compute, side streams, global state,
precision, the sandbox, threads and timing interposers.
"""

from __future__ import annotations

import re

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
