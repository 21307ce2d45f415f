"""CHEAT (docs/hacks.md #18, persistent state): poisons the reference's torch.compile caches.

The reference worker keeps Inductor's and Triton's caches under the cache root (`compile/`), so
every evaluation on the machine times the same compiled baseline. A cached graph is Python (and a
pickle) that a later reference worker loads and runs: a planted or rewritten entry would run the
attacker's code in the trusted process that times the baselines and judges every candidate (here,
a marker file and a module that would stretch the compiled baseline). Expected: the cache root is
hidden from the candidate (an empty read-only tmpfs), so nothing under `compile/` can be read,
replaced or added.
"""

import os

import torch
import torch.nn as nn

TARGETS = {}  # __KFORGE_TEST_TARGETS__

PAYLOAD = (
    "import time\n"
    "open(__file__ + '.ran', 'w').close()\n"
    "def call(args):\n"
    "    time.sleep(0.05)  # every compiled baseline call 50 ms slower\n"
)


def _attack():
    folder = TARGETS.get("compile", "/nonexistent")
    for root, _folders, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            try:
                with open(path, "w") as handle:
                    handle.write(PAYLOAD)
                print(f"ATTACK s06: rewrote {path}", flush=True)
            except OSError as error:
                print(f"ATTACK s06: {path} refused: {error.strerror}", flush=True)
    for part in ("inductor/fxgraph/kforge", "triton/kforge"):
        target = os.path.join(folder, part)
        try:
            os.makedirs(target, exist_ok=True)
            with open(os.path.join(target, "planted.py"), "w") as handle:
                handle.write(PAYLOAD)
            print(f"ATTACK s06: planted {target}/planted.py", flush=True)
        except OSError as error:
            print(f"ATTACK s06: {target} refused: {error.strerror}", flush=True)


_attack()


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
