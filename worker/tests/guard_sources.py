"""Candidates for the focused tests of the run-time guard (test_guard_dynamic.py), for the
adversarial corpus's relu (8 x 64) and softmax (4 x 8192) problems. They use PyTorch freely and
run under the permissive policy, so that the dynamic check under test is the one that fires."""

# Returns zeros (written memory, so no poison) and lets a thread fill in the answer later.
LINGERING_THREAD = """
import threading
import time
import torch

class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.zeros_like(x)
        source = x.clone()

        def fill():
            time.sleep(0.5)
            out.copy_(torch.relu(source))

        threading.Thread(target=fill, name="kforge-late-fill", daemon=True).start()
        return out
"""

# A thread started through _thread is invisible to threading.enumerate(); only the OS count sees it.
RAW_THREAD = """
import _thread
import time
import torch

class ModelNew(torch.nn.Module):
    def forward(self, x):
        _thread.start_new_thread(time.sleep, (3.0,))
        return torch.relu(x)
"""

EXPANDED_OUTPUT = """
import torch

class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x[:1]).expand_as(x)
"""

META_OUTPUT = """
import torch

class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.empty(x.shape, device="meta")
"""

FLAG_FLIPPED_WHEN_TIMED = """
import torch

_CALLS = [0]

class ModelNew(torch.nn.Module):
    def forward(self, x):
        _CALLS[0] += 1
        if _CALLS[0] == 5:
            torch.backends.cudnn.benchmark = not torch.backends.cudnn.benchmark
        return torch.relu(x)
"""

# Works on the first call of each model instance, then returns an unwritten block.
SKIPS_WORK_WHEN_REPEATED = """
import torch

class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls > 1:
            return torch.empty_like(x)
        return torch.relu(x)
"""

# Keyed on the storage address through numpy, out of the static guard's sight.
ADDRESS_CACHE = """
import torch

class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.answers = {}

    def forward(self, x):
        key = x.numpy().__array_interface__["data"][0]
        if key not in self.answers:
            self.answers[key] = torch.relu(x)
        return self.answers[key]
"""

SOFTMAX_FIVE_PERCENT_HIGH = """
import torch

class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1) * 1.05
"""

SOFTMAX_TORCH = """
import torch

class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)
"""

RELU_TORCH = """
import torch

class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
"""

# The same PyTorch program with the wrong shape: which comes first, its wrong answer or the policy's
# rejection of what ran (policy_rejection.py)?
RELU_TORCH_WRONG_SHAPE = """
import torch

class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)[:, :10]
"""

# A ReLU compiled with torch.jit.script (torch 1.13 has no torch.compile): the static guard only notes
# the compiler; at run time the scripted graph's operators reach the dispatcher like any others.
RELU_JIT_SCRIPTED = """
import torch

@torch.jit.script
def _relu(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x)

class ModelNew(torch.nn.Module):
    def forward(self, x):
        return _relu(x)
"""
