"""CHEAT (docs/hacks.md #15, cache persistence): pins its input in L2 with a persisting access window.

The window survives the harness's L2 flush between timed calls, so the input is read from L2
instead of HBM. Static check ``global-state``; the dynamic defence resets the persisting L2 limit
and the stream's access policy before timing.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_DECLARATION = "torch::Tensor relu_forward(torch::Tensor x);"

_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>
#include <algorithm>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "relu_forward expects float32 CUDA input");
    auto input = x.contiguous();
    auto y = torch::empty_like(input);
    const int64_t n = input.numel();
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const cudaDeviceProp* props = at::cuda::getCurrentDeviceProperties();
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, props->persistingL2CacheMaxSize);
    cudaStreamAttrValue attribute = {};
    attribute.accessPolicyWindow.base_ptr = input.data_ptr();
    attribute.accessPolicyWindow.num_bytes =
        std::min<size_t>(input.nbytes(), static_cast<size_t>(props->accessPolicyMaxWindowSize));
    attribute.accessPolicyWindow.hitRatio = 1.0f;
    attribute.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    attribute.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attribute);
    const int threads = 256;
    const int blocks = static_cast<int>((n + threads - 1) / threads);
    if (n > 0) {
        relu_kernel<<<blocks, threads, 0, stream>>>(input.data_ptr<float>(), y.data_ptr<float>(), n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return y;
}
"""

_ext = load_inline(
    name="kforge_adversarial_cuda_c15",
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
