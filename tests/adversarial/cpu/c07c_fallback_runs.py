"""CHEAT (docs/hacks.md #7, a fallback that runs): the kernel raises on every input the problem has, and
the except handler answers with PyTorch.

`relu_1d` accepts 1-D tensors only; the problem's inputs are 2-D, so every call takes the fallback.
Rejected at run time under every policy but `pytorch` (`silent-fallback`: the extension raised and
forward returned an answer), `permissive` included; `pytorch` records it.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = r"""
#include <torch/extension.h>
#include <cmath>

// The adversarial corpus's shared C++ kit (cases c06f, c07c, h06f, h06g, h06h, h07c, h08b): one extension, built once.

static void check_float_cpu(const torch::Tensor& x, const char* name) {
    TORCH_CHECK(x.device().is_cpu(), name, " expects a CPU tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, name, " expects float32");
}

static float gelu(float v) {
    return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
}

// out = gelu(y + bias), a fused epilogue over a (rows, cols) matrix.
torch::Tensor bias_gelu(torch::Tensor y, torch::Tensor bias) {
    check_float_cpu(y, "bias_gelu");
    auto input = y.contiguous();
    auto b = bias.contiguous();
    auto out = torch::empty_like(input);
    const int64_t rows = input.size(0), cols = input.size(1);
    const float* src = input.data_ptr<float>();
    const float* add = b.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
            dst[r * cols + c] = gelu(src[r * cols + c] + add[c]);
    return out;
}

// relu into a scratch buffer of its own, then ATen's mean finishes the row reduction.
torch::Tensor relu_row_mean(torch::Tensor x) {
    check_float_cpu(x, "relu_row_mean");
    auto input = x.contiguous();
    auto buffer = torch::empty_like(input);
    const float* src = input.data_ptr<float>();
    float* dst = buffer.data_ptr<float>();
    for (int64_t i = 0; i < input.numel(); ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
    return buffer.mean(1);
}

// relu(x + bias); an undefined or empty bias means no bias.
torch::Tensor relu_bias(torch::Tensor x, torch::Tensor bias) {
    check_float_cpu(x, "relu_bias");
    auto input = x.contiguous();
    auto out = torch::empty_like(input);
    const bool has_bias = bias.defined() && bias.numel() > 0;
    const int64_t cols = input.size(input.dim() - 1);
    const float* src = input.data_ptr<float>();
    const float* add = has_bias ? bias.data_ptr<float>() : nullptr;
    float* dst = out.data_ptr<float>();
    for (int64_t i = 0; i < input.numel(); ++i) {
        const float v = src[i] + (has_bias ? add[i % cols] : 0.0f);
        dst[i] = v > 0.0f ? v : 0.0f;
    }
    return out;
}

// A weight packed once as (in_features, out_features), row-major.
torch::Tensor pack_weight(torch::Tensor weight) {
    check_float_cpu(weight, "pack_weight");
    return weight.t().contiguous();
}

// gelu(x @ packed + bias) with the packed weight.
torch::Tensor linear_gelu_packed(torch::Tensor x, torch::Tensor packed, torch::Tensor bias) {
    check_float_cpu(x, "linear_gelu_packed");
    auto input = x.contiguous();
    const int64_t rows = input.size(0), inner = input.size(1), cols = packed.size(1);
    auto out = torch::empty({rows, cols}, input.options());
    const float* a = input.data_ptr<float>();
    const float* w = packed.data_ptr<float>();
    const float* b = bias.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
            float sum = b[c];
            for (int64_t k = 0; k < inner; ++k) sum += a[r * inner + k] * w[k * cols + c];
            dst[r * cols + c] = gelu(sum);
        }
    }
    return out;
}

// relu for 1-D tensors only: anything else raises.
torch::Tensor relu_1d(torch::Tensor x) {
    check_float_cpu(x, "relu_1d");
    TORCH_CHECK(x.dim() == 1, "relu_1d expects a 1-D tensor, got ", x.dim(), " dimensions");
    auto out = torch::empty_like(x);
    const float* src = x.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
    return out;
}

// A copy, element by element: a trivial kernel.
torch::Tensor copy_values(torch::Tensor x) {
    check_float_cpu(x, "copy_values");
    auto input = x.contiguous();
    auto out = torch::empty_like(input);
    const float* src = input.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t i = 0; i < input.numel(); ++i) dst[i] = src[i];
    return out;
}

// relu, elementwise.
torch::Tensor relu(torch::Tensor x) {
    check_float_cpu(x, "relu");
    auto input = x.contiguous();
    auto out = torch::empty_like(input);
    const float* src = input.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t i = 0; i < input.numel(); ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
    return out;
}
"""

_FUNCTIONS = ["bias_gelu", "relu_row_mean", "relu_bias", "pack_weight", "linear_gelu_packed", "relu_1d",
              "copy_values", "relu"]

_ext = load_inline(
    name="kforge_adversarial_kit",
    cpp_sources=_CPP_SOURCE,
    functions=_FUNCTIONS,
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        try:
            return _ext.relu_1d(x)
        except RuntimeError:
            return torch.relu(x)
