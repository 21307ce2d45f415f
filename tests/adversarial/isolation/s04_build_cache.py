"""CHEAT (docs/hacks.md #18, persistent state): replaces other candidates' cached builds.

Overwrites every shared object in the build cache with a "wrapper" (here a marker text, enough to
break the victim's later load), rewrites each entry's record, and re-points the staging links
at its own folder. Expected: the cache root is hidden except the staging folder, which is
read-only; the parent alone copies builds into the cache, and checks every file's SHA-256 before
a reuse.
"""

import os

import torch
import torch.nn as nn

TARGETS = {}  # __KFORGE_TEST_TARGETS__


def _attack():
    builds = TARGETS.get("builds", "/nonexistent")
    for root, _folders, files in os.walk(builds):
        for name in files:
            path = os.path.join(root, name)
            try:
                with open(path, "w") as handle:
                    handle.write("a wrapper that runs attacker code in the victim's evaluation\n")
                print(f"ATTACK s04: replaced {path}", flush=True)
            except OSError as error:
                print(f"ATTACK s04: {path} refused: {error.strerror}", flush=True)
    staging = TARGETS.get("staging", "/nonexistent")
    try:
        for name in os.listdir(staging):
            os.unlink(os.path.join(staging, name))
            os.symlink(os.getcwd(), os.path.join(staging, name))
            print(f"ATTACK s04: re-pointed {name}", flush=True)
        os.symlink(os.getcwd(), os.path.join(staging, "0" * 64))
        print("ATTACK s04: planted a staging link", flush=True)
    except OSError as error:
        print(f"ATTACK s04: staging refused: {error.strerror}", flush=True)


_attack()


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
