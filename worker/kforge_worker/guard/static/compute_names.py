"""Name tables of the static guard for forward's work: what counts as PyTorch compute (functions,
tensor methods, torch.nn modules, compilers), what a phase check or a clock read is, and which
calls build an extension."""

from __future__ import annotations

from typing import Iterable

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
