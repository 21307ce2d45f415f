"""Expected verdict: compile_error.

Tanh-GELU computed in half precision with the arithmetic operators of __half. PyTorch's extension
builder compiles every CUDA source with -D__CUDA_NO_HALF_OPERATORS__ and -D__CUDA_NO_HALF_CONVERSIONS__,
so `a * b` on two __half values has no matching operator and nvcc stops with an error like
`no operator "*" matches these operands`. (The fix is the intrinsics: __hmul, __hadd, or float math.)
"""
import torch
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = "torch::Tensor gelu_tanh_forward(torch::Tensor x);"

_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void gelu_tanh_half_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const __half v = __float2half(in[i]);
    const __half k0 = __float2half(0.7978845608f);
    const __half k1 = __float2half(0.044715f);
    const __half inner = k0 * (v + k1 * v * v * v);
    const float t = tanhf(__half2float(inner));
    out[i] = 0.5f * __half2float(v) * (1.0f + t);
}

torch::Tensor gelu_tanh_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    torch::Tensor input = x.contiguous();
    torch::Tensor out = torch::empty_like(input);
    const int64_t n = input.numel();
    if (n == 0) return out;
    const int threads = 256;
    const int64_t blocks = (n + threads - 1) / threads;
    gelu_tanh_half_kernel<<<static_cast<unsigned>(blocks), threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        input.data_ptr<float>(), out.data_ptr<float>(), n);
    const cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "gelu kernel launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

_extension = load_inline(
    name="kforge_example_gelu_half_operators_cuda",
    cpp_sources=_CPP_SOURCE,
    cuda_sources=_CUDA_SOURCE,
    functions=["gelu_tanh_forward"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _extension.gelu_tanh_forward(x)
