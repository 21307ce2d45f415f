"""CHEAT (docs/hacks.md #19, output rewritten after the call), on the GPU: a wrong kernel that fixes
its answers once the judge has stopped looking.

The CUDA "kernel" copies its input to a fresh output (wrong for ReLU wherever x < 0) and keeps
every output it returned. At the start of each later call it launches max(x, 0) over those earlier
outputs, on the current stream, so a harness that copied or read an output only after the next
call would see the right answer. Defence: the output is handed to the judge (a device-to-device
copy into the judge's own memory, from an allocation shared by descriptor) before the candidate's next call, so
the wrong answer is what is judged: `incorrect`.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_DECLARATION = "torch::Tensor copy_forward(torch::Tensor x);"

_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <vector>

__global__ void copy_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i];
}

__global__ void relu_in_place(float* __restrict__ y, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n && y[i] < 0.0f) y[i] = 0.0f;
}

static std::vector<torch::Tensor> returned;

torch::Tensor copy_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "copy_forward expects float32 CUDA input");
    auto stream = at::cuda::getCurrentCUDAStream();
    for (auto& old : returned) {  // the earlier answers, fixed after the fact
        const int64_t n = old.numel();
        relu_in_place<<<static_cast<int>((n + 255) / 256), 256, 0, stream>>>(old.data_ptr<float>(), n);
    }
    auto input = x.contiguous();
    auto y = torch::empty_like(input);
    const int64_t n = input.numel();
    copy_kernel<<<static_cast<int>((n + 255) / 256), 256, 0, stream>>>(input.data_ptr<float>(), y.data_ptr<float>(), n);
    TORCH_CHECK(cudaGetLastError() == cudaSuccess, "copy_kernel launch failed");
    returned.push_back(y);
    return y;
}
"""

_ext = load_inline(
    name="kforge_adversarial_cuda_c19",
    cpp_sources=_CPP_DECLARATION,
    cuda_sources=_CUDA_SOURCE,
    functions=["copy_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.copy_forward(x)
