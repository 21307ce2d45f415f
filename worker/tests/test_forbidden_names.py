"""A problem's forbidden names (forbidden_names.py): operators by what a call dispatched, modules by
what was imported, the rest by the source's uses; comments, strings and the file's own names are
not uses."""

import pytest

from kforge_worker.guard.forbidden_names import ForbiddenNames
from worker_process import PYTORCH, evaluate

ENTRIES = [
    "torch.topk",
    "Tensor.argsort",
    "torch.matmul",
    "F.linear",
    "from colorsys",
    "vllm.attention",
    "chunk_kda",
]


def test_each_name_is_judged_where_it_can_be_seen():
    names = ForbiddenNames.of(ENTRIES)
    assert names.operators == {"topk": "torch.topk"}  # reaches the dispatcher by its own name
    assert names.modules == {"colorsys": "from colorsys", "vllm.attention": "vllm.attention"}
    # Composites (argsort, matmul, linear) never reach the dispatcher by name: judged by source.
    assert {"torch.Tensor.argsort", "torch.matmul", "torch.nn.functional.linear", "chunk_kda"} <= set(names.sources)


def test_the_source_is_read_for_uses_not_for_spellings():
    names = ForbiddenNames.of(ENTRIES)
    source = """
import torch
import torch.nn.functional as G
# torch.matmul would be simpler; F.linear too
NOTE = "Tensor.argsort and chunk_kda"

def chunk_kda(x):  # its own function of that name
    return x

def forward(x, w):
    order = x.detach().argsort(dim=-1)
    return chunk_kda(G.linear(x, w)), order
"""
    assert sorted(names.in_source(source)) == [("F.linear", 12), ("Tensor.argsort", 11)]
    assert ForbiddenNames.of(["chunk_kda"]).in_source("from fla.ops import chunk_kda\n") == [("chunk_kda", 1)]


def test_a_dispatched_operator_is_named_with_its_count():
    names = ForbiddenNames.of(["torch.topk", "torch.sort"])
    said = names.dispatched([("aten::topk", 2), ("aten::sort.stable", 1), ("aten::add.Tensor", 9)])
    assert said == ["`torch.topk` (aten::topk dispatched 2 time(s))", "`torch.sort` (aten::sort dispatched 1 time(s))"]


PROBLEM = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.topk(x, 3, dim=-1).values

batch = 4
n = 16

def get_inputs():
    return [torch.randn(batch, n)]

def get_init_inputs():
    return []
"""

# The operator reached through a helper and an alias: no spelling of `topk` near the call.
THROUGH_A_HELPER = """
import torch
import torch.nn as nn

pick = getattr(torch, "to" + "pk")

class ModelNew(nn.Module):
    def forward(self, x):
        return pick(x, 3, dim=-1).values
"""

# Mentions it only in a comment and a string, and sorts instead.
BY_SORTING = '''
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    """Not torch.topk: a full sort, then the first three."""

    def forward(self, x):  # torch.topk would be faster
        return torch.sort(x, dim=-1, descending=True).values[..., :3]
'''

IMPORTS_A_MODULE = BY_SORTING.replace("import torch.nn as nn", "import torch.nn as nn\nimport colorsys")
USES_A_COMPOSITE = BY_SORTING.replace(
    "torch.sort(x, dim=-1, descending=True).values", "x.gather(-1, x.argsort(dim=-1, descending=True))"
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("forbidden")
    (root / "reference.py").write_text(PROBLEM)
    (root / "shapes.py").write_text("SHAPES = [{'batch': 4, 'n': 16}]")
    (root / "problem.yaml").write_text("forbidden:\n  - torch.topk\n  - Tensor.argsort\n  - import colorsys\n")
    return root


@pytest.mark.parametrize(
    "source, verdict, words",
    [
        (THROUGH_A_HELPER, "rejected", "aten::topk dispatched"),
        (BY_SORTING, "correct", None),
        (IMPORTS_A_MODULE, "rejected", "the module colorsys was imported"),
        (USES_A_COMPOSITE, "rejected", "uses `Tensor.argsort`"),
    ],
)
def test_forbidden_names_end_in_the_candidates_own_verdict(folder, tmp_path, build_dir, source, verdict, words):
    candidate = tmp_path / "candidate.py"
    candidate.write_text(source)
    result = evaluate(folder / "reference.py", candidate, tmp_path / "run", build_dir, run_timing=False, guard=PYTORCH)
    if verdict == "correct":
        assert result.failures == {} and result.judgement["passed"] is True, result.failures
        return
    failure = result.failures["candidate"]
    assert (failure["kind"], failure["check"]) == ("rejected", "forbidden"), failure
    assert words in failure["message"], failure["message"]
