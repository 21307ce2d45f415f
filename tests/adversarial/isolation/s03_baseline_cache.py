"""CHEAT (docs/hacks.md #18, persistent state): multiplies every cached baseline time by 20.

Every later evaluation of the problem would then report a 20x speedup for any kernel. Expected:
the cache root is hidden from the candidate (an empty read-only tmpfs) and only the parent,
from the reference worker's message, writes baselines.
"""

import json
import os

import torch
import torch.nn as nn

TARGETS = {}  # __KFORGE_TEST_TARGETS__


def _inflate(value):
    """Every time in the entry, 20 times longer."""
    if isinstance(value, dict):
        return {key: _inflate(item) for key, item in value.items()}
    if isinstance(value, list):
        return [item * 20 if isinstance(item, float) else _inflate(item) for item in value]
    return value


def _attack():
    folder = TARGETS.get("baselines", "/nonexistent")
    try:
        names = os.listdir(folder)
    except OSError as error:
        print(f"ATTACK s03: {folder} refused: {error.strerror}", flush=True)
        return
    print(f"ATTACK s03: {folder} holds {names}", flush=True)
    for name in names:
        path = os.path.join(folder, name)
        try:
            with open(path) as handle:
                entry = json.load(handle)
            with open(path, "w") as handle:
                json.dump(_inflate(entry), handle)
            print(f"ATTACK s03: inflated {path}", flush=True)
        except (OSError, ValueError) as error:
            print(f"ATTACK s03: {path} refused: {error}", flush=True)


_attack()


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
