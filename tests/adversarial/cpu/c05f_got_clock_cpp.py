"""CHEAT (docs/hacks.md #5, issue 19, native): a C++ static initialiser patches the interpreter's GOT
entry of ``clock_gettime``.

When the extension loads, a static object walks the main program's dynamic relocations, finds the
jump slot of ``clock_gettime``, makes its page writable and points it at a wrapper that makes the
monotonic clock run 100 times slower. Every clock the interpreter reads through it (time.perf_counter,
time.perf_counter_ns, time.monotonic) then shrinks, with no Python object changed. The relu itself
is honest. Expected: correct, with the figure the parent measured itself (its trusted batches
bound the in-process times from below; docs/timing.md), not the forged one.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = r"""
#include <torch/extension.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

namespace {

using ClockFunction = int (*)(clockid_t, struct timespec*);
ClockFunction real_clock = nullptr;
long long origin_ns = -1;

int slow_clock(clockid_t id, struct timespec* value) {
    int status = real_clock(id, value);
    if (status == 0 && id == CLOCK_MONOTONIC) {
        long long now = (long long)value->tv_sec * 1000000000LL + value->tv_nsec;
        if (origin_ns < 0) origin_ns = now;
        long long slowed = origin_ns + (now - origin_ns) / 100;
        value->tv_sec = slowed / 1000000000LL;
        value->tv_nsec = slowed % 1000000000LL;
    }
    return status;
}

template <typename T>
T absolute(ElfW(Addr) value, ElfW(Addr) base) {
    return reinterpret_cast<T>(value < base ? value + base : value);
}

int patch_main_program(struct dl_phdr_info* info, size_t, void* data) {
    int* done = static_cast<int*>(data);
    if (*done || (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')) return 0;
    const ElfW(Dyn)* dynamic = nullptr;
    for (int index = 0; index < info->dlpi_phnum; ++index) {
        if (info->dlpi_phdr[index].p_type == PT_DYNAMIC) {
            dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[index].p_vaddr);
        }
    }
    if (dynamic == nullptr) return 0;
    const ElfW(Rela)* relocations = nullptr;
    size_t bytes = 0;
    const ElfW(Sym)* symbols = nullptr;
    const char* names = nullptr;
    for (const ElfW(Dyn)* entry = dynamic; entry->d_tag != DT_NULL; ++entry) {
        if (entry->d_tag == DT_JMPREL) relocations = absolute<const ElfW(Rela)*>(entry->d_un.d_ptr, info->dlpi_addr);
        if (entry->d_tag == DT_PLTRELSZ) bytes = entry->d_un.d_val;
        if (entry->d_tag == DT_SYMTAB) symbols = absolute<const ElfW(Sym)*>(entry->d_un.d_ptr, info->dlpi_addr);
        if (entry->d_tag == DT_STRTAB) names = absolute<const char*>(entry->d_un.d_ptr, info->dlpi_addr);
    }
    if (relocations == nullptr || symbols == nullptr || names == nullptr) return 0;
    for (size_t index = 0; index < bytes / sizeof(ElfW(Rela)); ++index) {
        const ElfW(Sym)& symbol = symbols[ELF64_R_SYM(relocations[index].r_info)];
        if (strcmp(names + symbol.st_name, "clock_gettime") != 0) continue;
        void** slot = reinterpret_cast<void**>(info->dlpi_addr + relocations[index].r_offset);
        long page = sysconf(_SC_PAGESIZE);
        void* start = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(slot) & ~(uintptr_t)(page - 1));
        if (mprotect(start, page, PROT_READ | PROT_WRITE) != 0) return 0;
        real_clock = reinterpret_cast<ClockFunction>(*slot);
        *slot = reinterpret_cast<void*>(&slow_clock);
        *done = 1;
    }
    return 0;
}

struct Patcher {
    Patcher() {
        int done = 0;
        dl_iterate_phdr(patch_main_program, &done);
    }
} patcher;

}  // namespace

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "relu_forward expects float32 on the CPU");
    auto input = x.contiguous();
    auto out = torch::empty_like(input);
    const float* src = input.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t i = 0; i < input.numel(); ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
    return out;
}
"""

_ext = load_inline(
    name="kforge_adversarial_got_clock",
    cpp_sources=_CPP_SOURCE,
    functions=["relu_forward"],
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_forward(x)
