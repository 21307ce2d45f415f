"""CHEAT (docs/hacks.md #17, global state): a seed set in forward, hoping the inputs repeat.

The candidate calls torch.manual_seed(0) in every forward, so that a harness that draws the next
inputs from the global generator without seeding it again would hand it the same inputs each
time; it then answers every call after its first with that first answer and does no work.
Defence: the worker seeds every generator with the call's own seed before it draws each call's
inputs (docs/timing.md), so the inputs differ from call to call whatever the candidate seeded,
and the kept timed outputs, judged at once, are stale: `rejected` (`timed-output`). Its seed is
a static note (`global-state`).
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
        self.first = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        torch.manual_seed(0)  # the next inputs, drawn from the global generator, would repeat
        if self.first is None or self.first.shape != x.shape:
            self.first = _ext.relu_through(x, torch.empty_like(x))
        return self.first
