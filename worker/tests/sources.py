"""Tiny problem and candidate files for the worker tests (written into tmp_path by the tests)."""

LINEAR_RELU_PROBLEM = """
import torch

class Model(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = torch.nn.Linear(features, features)

    def forward(self, x):
        return torch.relu(self.linear(x))

batch_size = 64
features = 32
KFORGE_PRESETS = {"cpu": {"batch_size": 8}, "gpu": {"batch_size": 128}}

def get_inputs():
    return [torch.randn(batch_size, features)]

def get_init_inputs():
    return [features]
"""

# Same weights as the reference (same constructor, same seed), a different but exact formula.
LINEAR_RELU_CORRECT = """
import torch

class ModelNew(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = torch.nn.Linear(features, features)

    def forward(self, x):
        print("candidate forward ran")
        return torch.clamp(x @ self.linear.weight.t() + self.linear.bias, min=0)
"""

LINEAR_RELU_INCORRECT = """
import torch

class ModelNew(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = torch.nn.Linear(features, features)

    def forward(self, x):
        return torch.relu(self.linear(x)) + 0.5
"""

LINEAR_RELU_NAN = """
import torch

class ModelNew(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = torch.nn.Linear(features, features)

    def forward(self, x):
        out = torch.relu(self.linear(x))
        out[0, 0] = float("nan")
        return out
"""

LINEAR_RELU_MUTATES_INPUT = """
import torch

class ModelNew(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = torch.nn.Linear(features, features)

    def forward(self, x):
        out = torch.relu(self.linear(x))
        x.zero_()
        return out
"""

SYNTAX_ERROR = """
import torch

class ModelNew(torch.nn.Module)
    def forward(self, x):
        return x
"""

NO_MODEL_NEW = """
import torch

class ModelNw(torch.nn.Module):
    def forward(self, x):
        return x
"""

RAISES_ON_IMPORT = """
import torch

raise RuntimeError("candidate refuses to import")
"""

CONSTRUCTOR_RAISES = """
import torch

class ModelNew(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        raise ValueError("no weights for you")
"""

FORWARD_RAISES = """
import torch

class ModelNew(torch.nn.Module):
    def __init__(self, features):
        super().__init__()

    def forward(self, x):
        raise IndexError("forward blew up on purpose")
"""

PATCHES_TIMER = """
import time
import torch

time.perf_counter_ns = lambda: 0

class ModelNew(torch.nn.Module):
    def __init__(self, features):
        super().__init__()

    def forward(self, x):
        return x
"""

INPUTS_RAISE_PROBLEM = """
import torch

class Model(torch.nn.Module):
    def forward(self, x):
        return x

def get_inputs():
    raise RuntimeError("get_inputs is broken")

def get_init_inputs():
    return []
"""

IDENTITY_CANDIDATE = """
import torch

class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x
"""

REFERENCE_RAISES_PROBLEM = """
import torch

class Model(torch.nn.Module):
    def forward(self, x):
        raise ZeroDivisionError("the reference is broken")

def get_inputs():
    return [torch.randn(4)]

def get_init_inputs():
    return []
"""

# A tuple output with non-tensor leaves; refuses float64, so the fp64 error profile is null.
TUPLE_PROBLEM = """
import torch

class Model(torch.nn.Module):
    def forward(self, x, scale):
        if x.dtype == torch.float64:
            raise TypeError("this problem does not run in float64")
        return (x * scale, [x.sum(dim=0), x.shape[0]], None)

def get_inputs():
    return [torch.randn(6, 3), 2.5]

def get_init_inputs():
    return []
"""

TUPLE_CORRECT = """
import torch

class ModelNew(torch.nn.Module):
    def forward(self, x, scale):
        return (scale * x, [x.sum(dim=0), int(x.size(0))], None)
"""

ADD_PROBLEM = """
import torch

class Model(torch.nn.Module):
    def forward(self, a, b):
        return a + b

size = 4096

def get_inputs():
    return [torch.randn(size), torch.randn(size)]

def get_init_inputs():
    return []
"""

CPP_ADD_CORRECT = r'''
import torch
from torch.utils.cpp_extension import load_inline

SOURCE = """
torch::Tensor add(torch::Tensor a, torch::Tensor b) {
    auto x = a.contiguous();
    auto y = b.contiguous();
    auto out = torch::empty_like(x);
    const float* px = x.data_ptr<float>();
    const float* py = y.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
        po[i] = px[i] + py[i];
    }
    return out;
}
"""

extension = load_inline(name="kforge_test_add", cpp_sources=SOURCE, functions=["add"], verbose=True)

class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return extension.add(a, b)
'''

CPP_ADD_BROKEN = r'''
import torch
from torch.utils.cpp_extension import load_inline

SOURCE = """
torch::Tensor add(torch::Tensor a, torch::Tensor b) {
    return kforge_function_that_does_not_exist(a, b);
}
"""

extension = load_inline(name="kforge_test_broken", cpp_sources=SOURCE, functions=["add"], verbose=True)

class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return extension.add(a, b)
'''

FAKE_TRITON_COMPILE_ERROR = """
import torch

class CompilationError(Exception):
    pass

CompilationError.__module__ = "triton.compiler.errors"

class ModelNew(torch.nn.Module):
    def __init__(self, features):
        super().__init__()

    def forward(self, x):
        raise CompilationError("at 3:4: unsupported tensor index")
"""

LINEAR_RELU_SAME_OPS = """
import torch

class ModelNew(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = torch.nn.Linear(features, features)

    def forward(self, x):
        return torch.relu(self.linear(x))
"""

CUDA_ADD_CORRECT = r'''
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = """
#include <torch/extension.h>

__global__ void kforge_add_kernel(const float* a, const float* b, float* out, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

torch::Tensor add(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    int64_t n = a.numel();
    int threads = 256;
    int blocks = (int)((n + threads - 1) / threads);
    kforge_add_kernel<<<blocks, threads>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

extension = load_inline(name="kforge_gpu_add", cpp_sources="torch::Tensor add(torch::Tensor a, torch::Tensor b);",
                        cuda_sources=CUDA_SOURCE, functions=["add"], verbose=True)

class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return extension.add(a.contiguous(), b.contiguous())
'''

CUDA_BROKEN = r'''
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = """
#include <torch/extension.h>
__global__ void broken_kernel(float* out) { out[threadIdx.x] = kforge_undefined_device_value; }
torch::Tensor add(torch::Tensor a, torch::Tensor b) { return a; }
"""

extension = load_inline(name="kforge_gpu_broken", cpp_sources="torch::Tensor add(torch::Tensor a, torch::Tensor b);",
                        cuda_sources=CUDA_SOURCE, functions=["add"])

class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return extension.add(a, b)
'''

CUDA_ILLEGAL_ADDRESS = r'''
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = """
#include <torch/extension.h>
__global__ void wild_kernel(float* out) { float* p = (float*)0x10; p[threadIdx.x] = 1.0f; out[0] = 0.0f; }
torch::Tensor add(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    wild_kernel<<<1, 32>>>(out.data_ptr<float>());
    return out;
}
"""

extension = load_inline(name="kforge_gpu_wild", cpp_sources="torch::Tensor add(torch::Tensor a, torch::Tensor b);",
                        cuda_sources=CUDA_SOURCE, functions=["add"])

class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return extension.add(a, b)
'''

TRITON_ADD_CORRECT = """
import torch
import triton
import triton.language as tl

@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) + tl.load(b_ptr + offsets, mask=mask), mask=mask)

class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        n = a.numel()
        add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        return out
"""

TRITON_COMPILE_ERROR = """
import torch
import triton
import triton.language as tl

@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, kforge_not_a_triton_name(a_ptr + offsets))

class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        add_kernel[(1,)](a, b, out, a.numel(), BLOCK=1024)
        return out
"""
