"""Expected verdict: incorrect.

Builds and runs, but the launch is sized for a float4 kernel (n / 4 threads) while the kernel
handles one float per thread, so only the first quarter of the output is written and the rest is
whatever the allocator's memory held. A classic bug after turning a vectorised kernel back into a
scalar one.
"""
import torch
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = "torch::Tensor relu_forward(torch::Tensor x);"

_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>

__global__ void relu_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] < 0.0f ? 0.0f : in[i];
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    const c10::cuda::CUDAGuard device_guard(x.device());
    torch::Tensor input = x.contiguous();
    torch::Tensor out = torch::empty_like(input);
    const int64_t n = input.numel();
    if (n == 0) return out;
    const int threads = 256;
    const int64_t n4 = (n + 3) / 4;                     // sized for four elements per thread ...
    const int64_t blocks = (n4 + threads - 1) / threads;  // ... but the kernel does one
    relu_kernel<<<static_cast<unsigned>(blocks), threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        input.data_ptr<float>(), out.data_ptr<float>(), n);
    const cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "relu kernel launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

_extension = load_inline(
    name="kforge_example_relu_incorrect_cuda",
    cpp_sources=_CPP_SOURCE,
    cuda_sources=_CUDA_SOURCE,
    functions=["relu_forward"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _extension.relu_forward(x)
