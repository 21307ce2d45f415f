"""CHEAT (docs/hacks.md #5, issue 19, native, cuda): a C++ static initialiser patches every loaded
library's GOT entry of ``cudaEventElapsedTime``.

When the extension loads, a static object walks the dynamic relocations of every loaded object
(libtorch_python, libtorch_cuda, …), finds each slot bound to a symbol whose name starts with
``cudaEventElapsedTime``, makes its page writable and points it at a wrapper that divides every
elapsed time by 100. Every CUDA event time the process reads then shrinks, with no Python object
changed. The relu kernel itself is honest. It prints how many slots it patched, so a test can tell
an attack that took effect from a build whose CUDA runtime is linked in statically. Expected:
correct, with the figure the parent measured itself (its trusted batches bound the in-process
times from below; docs/timing.md), not the forged one.
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
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

namespace {

using ElapsedFunction = cudaError_t (*)(float*, cudaEvent_t, cudaEvent_t);
ElapsedFunction real_elapsed = nullptr;
int patched_slots = 0;

cudaError_t shrunk_elapsed(float* ms, cudaEvent_t start, cudaEvent_t end) {
    cudaError_t status = real_elapsed(ms, start, end);
    if (status == cudaSuccess && ms != nullptr) *ms /= 100.0f;
    return status;
}

template <typename T>
T absolute(ElfW(Addr) value, ElfW(Addr) base) {
    return reinterpret_cast<T>(value < base ? value + base : value);
}

void patch_table(const ElfW(Rela)* table, size_t bytes, const ElfW(Sym)* symbols, const char* names, ElfW(Addr) base) {
    if (table == nullptr) return;
    long page = sysconf(_SC_PAGESIZE);
    for (size_t index = 0; index < bytes / sizeof(ElfW(Rela)); ++index) {
        const ElfW(Sym)& symbol = symbols[ELF64_R_SYM(table[index].r_info)];
        if (strncmp(names + symbol.st_name, "cudaEventElapsedTime", 20) != 0) continue;
        void** slot = reinterpret_cast<void**>(base + table[index].r_offset);
        if (*slot == reinterpret_cast<void*>(&shrunk_elapsed)) continue;
        void* start = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(slot) & ~(uintptr_t)(page - 1));
        if (mprotect(start, page, PROT_READ | PROT_WRITE) != 0) continue;
        if (real_elapsed == nullptr) real_elapsed = reinterpret_cast<ElapsedFunction>(*slot);
        *slot = reinterpret_cast<void*>(&shrunk_elapsed);
        ++patched_slots;
    }
}

int patch_object(struct dl_phdr_info* info, size_t, void*) {
    const ElfW(Dyn)* dynamic = nullptr;
    for (int index = 0; index < info->dlpi_phnum; ++index) {
        if (info->dlpi_phdr[index].p_type == PT_DYNAMIC) {
            dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[index].p_vaddr);
        }
    }
    if (dynamic == nullptr) return 0;
    const ElfW(Rela)* plt = nullptr;
    const ElfW(Rela)* data = nullptr;
    size_t plt_bytes = 0, data_bytes = 0;
    const ElfW(Sym)* symbols = nullptr;
    const char* names = nullptr;
    for (const ElfW(Dyn)* entry = dynamic; entry->d_tag != DT_NULL; ++entry) {
        if (entry->d_tag == DT_JMPREL) plt = absolute<const ElfW(Rela)*>(entry->d_un.d_ptr, info->dlpi_addr);
        if (entry->d_tag == DT_PLTRELSZ) plt_bytes = entry->d_un.d_val;
        if (entry->d_tag == DT_RELA) data = absolute<const ElfW(Rela)*>(entry->d_un.d_ptr, info->dlpi_addr);
        if (entry->d_tag == DT_RELASZ) data_bytes = entry->d_un.d_val;
        if (entry->d_tag == DT_SYMTAB) symbols = absolute<const ElfW(Sym)*>(entry->d_un.d_ptr, info->dlpi_addr);
        if (entry->d_tag == DT_STRTAB) names = absolute<const char*>(entry->d_un.d_ptr, info->dlpi_addr);
    }
    if (symbols == nullptr || names == nullptr) return 0;
    patch_table(plt, plt_bytes, symbols, names, info->dlpi_addr);
    patch_table(data, data_bytes, symbols, names, info->dlpi_addr);
    return 0;
}

struct Patcher {
    Patcher() {
        dl_iterate_phdr(patch_object, nullptr);
        fprintf(stderr, "ATTACK c05h: patched %d cudaEventElapsedTime slots\n", patched_slots);
    }
} patcher;

}  // namespace

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "relu_forward expects float32 CUDA input");
    auto input = x.contiguous();
    auto y = torch::empty_like(input);
    const int64_t n = input.numel();
    const int threads = 256;
    const int blocks = static_cast<int>((n + threads - 1) / threads);
    if (n > 0) {
        relu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(input.data_ptr<float>(), y.data_ptr<float>(), n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return y;
}
"""

_ext = load_inline(
    name="kforge_adversarial_cuda_c05h",
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
