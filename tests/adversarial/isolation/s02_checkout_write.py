"""CHEAT (docs/hacks.md #18, persistent state): writes to the project checkout and to the problem file.

Appends to the original problem file (a later reference would compute something else) and
creates a file in the project's folder. Expected: the candidate reads a copy of the problem in
its scratch's read-only `in` folder and never learns the original's path from kforge; the project
is read-only in its view (here the test tells it the paths outright).
"""

import os

import torch
import torch.nn as nn

TARGETS = {}  # __KFORGE_TEST_TARGETS__


def _attack():
    for path, mode in ((TARGETS.get("problem", ""), "a"), (os.path.join(TARGETS.get("checkout", "/nonexistent"), "planted.py"), "x")):
        try:
            with open(path, mode) as handle:
                handle.write("\n_PLANTED = True\n")
            print(f"ATTACK s02: wrote {path}", flush=True)
        except OSError as error:
            print(f"ATTACK s02: {path} refused: {error.strerror}", flush=True)
    print(f"ATTACK s02: the problem the candidate was given: {__import__('sys').argv}", flush=True)


_attack()


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
