"""Expected verdict: timeout (in the correctness stage).

The C++ builds and loads; its forward spins forever in native code, holding the GIL, so nothing in
the process can interrupt it: the evaluator's stage time limit has to kill the process group. The
flag is `volatile` so the compiler must keep the loop (an empty side-effect-free loop may be
assumed to terminate and be deleted).
"""
import torch
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = r"""
#include <torch/extension.h>

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "expected a float32 CPU tensor");
    torch::Tensor input = x.contiguous();
    torch::Tensor out = torch::empty_like(input);
    volatile bool converged = false;
    while (!converged) {
        // waits for a condition that never becomes true
    }
    const float* in_ptr = input.data_ptr<float>();
    float* out_ptr = out.data_ptr<float>();
    for (int64_t i = 0; i < input.numel(); ++i) out_ptr[i] = in_ptr[i] < 0.0f ? 0.0f : in_ptr[i];
    return out;
}
"""

_extension = load_inline(
    name="kforge_example_relu_spin_cpu",
    cpp_sources=_CPP_SOURCE,
    functions=["relu_forward"],
    extra_cflags=["-O3"],
)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _extension.relu_forward(x)
