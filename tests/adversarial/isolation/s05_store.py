"""CHEAT (docs/hacks.md #18, persistent state): rewrites the run store directly.

Opens the SQLite store and marks every candidate correct with a huge speedup (a search would then
reuse the falsified row as its best kernel). Expected: the store is hidden from the candidate and
read-only in any case.
"""

import sqlite3

import torch
import torch.nn as nn

TARGETS = {}  # __KFORGE_TEST_TARGETS__


def _attack():
    store = TARGETS.get("store", "/nonexistent")
    try:
        connection = sqlite3.connect(store, timeout=1)
        connection.execute("UPDATE candidates SET verdict = 'correct', speedup = 1174.0")
        connection.commit()
        connection.close()
        print(f"ATTACK s05: rewrote {store}", flush=True)
    except sqlite3.Error as error:
        print(f"ATTACK s05: {store} refused: {error}", flush=True)


_attack()


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [v if v > 0.0 else 0.0 for v in x.reshape(-1).tolist()]
        return torch.tensor(values, dtype=x.dtype, device=x.device).view(x.shape)
