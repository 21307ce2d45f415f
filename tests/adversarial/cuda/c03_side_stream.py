"""CHEAT (docs/hacks.md #3, side stream): runs the kernel on a private stream and never joins it.

The kernel is deliberately slow (each thread spins about 0.05 ms) and launched on a non-blocking
stream of its own, so CUDA events recorded on the current stream around the call measure almost
nothing. The output is right once the device is synchronised. Static analysis only notes the
stream; the dynamic ``side-stream`` check compares event time with wall time.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_DECLARATION = "torch::Tensor relu_forward(torch::Tensor x);"

_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void relu_spin_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                                 long long spin_cycles) {
    const long long start = clock64();
    while (clock64() - start < spin_cycles) {
    }
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}

static cudaStream_t private_stream() {
    static cudaStream_t stream = nullptr;
    if (stream == nullptr) {
        cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    }
    return stream;
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "relu_forward expects float32 CUDA input");
    auto input = x.contiguous();
    auto y = torch::empty_like(input);
    const int64_t n = input.numel();
    const int threads = 256;
    const int blocks = static_cast<int>((n + threads - 1) / threads);
    relu_spin_kernel<<<blocks, threads, 0, private_stream()>>>(
        input.data_ptr<float>(), y.data_ptr<float>(), n, 100000LL);
    return y;  // returns while the private stream is still busy
}
"""

_ext = load_inline(
    name="kforge_adversarial_cuda_c03",
    cpp_sources=_CPP_DECLARATION,
    cuda_sources=_CUDA_SOURCE,
    functions=["relu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_forward(x)
