"""CHEAT (docs/hacks.md #19, output rewritten after the call): a speedup out of nothing.

Each model answers honestly on its first call (the extension marks a one-element tensor of the
model's once it has answered, so no counter in Python tells the calls apart). On every later call the C++ extension does no work:
it returns the same buffer again, still holding the first answer, and writes the true answer for
this call's input into that buffer only at the start of the next call, after the harness has read
it (a harness that copies outputs lazily, or judges saved files later, then sees right answers and
times calls that did nothing). Defence: the output of a kept timed call is handed to the judge at
once, before the next call: the stale answer is what is judged, and the verdict is `rejected`
(`timed-output`).
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SOURCE = r"""
#include <torch/extension.h>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>

// c19_rewrites_after_return.py
static std::vector<torch::Tensor> returned_by_rewrite;

static void fix_earlier() {
    for (auto& old : returned_by_rewrite) {
        float* data = old.data_ptr<float>();
        for (int64_t i = 0; i < old.numel(); ++i) data[i] = data[i] > 0.0f ? data[i] : 0.0f;
    }
    DIR* folder = opendir("out");
    if (folder == nullptr) return;
    while (dirent* entry = readdir(folder)) {
        std::string path = std::string("out/") + entry->d_name;
        int fd = open(path.c_str(), O_RDWR);
        if (fd < 0) continue;
        char zero[4096] = {0};
        (void)!write(fd, zero, sizeof zero);  // any saved file is overwritten, whatever it held
        close(fd);
    }
    closedir(folder);
}

static void at_exit() { fix_earlier(); }

torch::Tensor rewrite_after_return(torch::Tensor x) {
    static bool registered = (std::atexit(at_exit), true);
    (void)registered;
    fix_earlier();
    auto out = x.contiguous().clone();
    returned_by_rewrite.push_back(out);
    return out;
}

// c19b_stale_view_when_timed.py
struct Pending { torch::Tensor out; torch::Tensor input; };

torch::Tensor stale_view(torch::Tensor x, torch::Tensor state, torch::Tensor answered) {
    static std::vector<Pending> pending;
    const bool first = answered.data_ptr<float>()[0] == 0.0f;  // this model's first call
    answered.data_ptr<float>()[0] = 1.0f;
    for (auto& late : pending) {  // the previous call's true answer, written after the fact
        const float* src = late.input.data_ptr<float>();
        float* dst = late.out.data_ptr<float>();
        for (int64_t i = 0; i < late.out.numel(); ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
    }
    pending.clear();
    auto input = x.contiguous();
    if (first) {
        const float* src = input.data_ptr<float>();
        float* dst = state.data_ptr<float>();
        for (int64_t i = 0; i < input.numel(); ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
        return state;
    }
    pending.push_back({state, input.clone()});
    return state;
}

// c19c_prefills_the_pipe.py
torch::Tensor prefill_pipe(torch::Tensor x) {
    auto input = x.contiguous();
    auto right = input.clamp_min(0);
    int fd = open("in/handover", O_WRONLY | O_NONBLOCK);
    if (fd >= 0) {
        (void)!write(fd, right.data_ptr<float>(), right.numel() * sizeof(float));
        close(fd);
    }
    return input.clone();
}

// h19_workspace_rewritten_later.py
torch::Tensor relu_through(torch::Tensor x, torch::Tensor workspace) {
    float* scratch = workspace.data_ptr<float>();
    for (int64_t i = 0; i < workspace.numel(); ++i) scratch[i] = 0.0f;  // scrub the last answer
    auto input = x.contiguous();
    const float* src = input.data_ptr<float>();
    for (int64_t i = 0; i < input.numel(); ++i) scratch[i] = src[i] > 0.0f ? src[i] : 0.0f;
    auto out = torch::empty_like(input);
    std::memcpy(out.data_ptr<float>(), scratch, input.numel() * sizeof(float));
    return out;
}
"""

_ext = load_inline(
    name="kforge_adversarial_handover_kit",
    cpp_sources=_CPP_SOURCE,
    functions=["rewrite_after_return", "stale_view", "prefill_pipe", "relu_through"],
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.state = None
        self.answered = torch.zeros(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.state is None or self.state.shape != x.shape:
            self.state = torch.empty_like(x)
        return _ext.stale_view(x, self.state, self.answered)
