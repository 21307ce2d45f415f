"""The stressed correctness trial (docs/hacks.md #20, #21): one trial's inputs scaled and shifted.

A kernel can be right only where it is checked: exact while its inputs look like the trials' (small
standard-normal values) and cheaper elsewhere, or a copy of its input where the operator is close
to the identity on that distribution (a LayerNorm over a wide row of standard-normal values). So
when a run has two correctness seeds or more, the last seed's trial draws its inputs as usual and
then, before they are cast to the run's precision, every floating tensor x becomes
``x * STRESS_SCALE + STRESS_SHIFT``; a tensor that holds an exact zero is only scaled, since its
zeros may be structure (a triangular or sparse matrix, padding, a mask) that the problem's kernels
may rely on. Integer, bool, fp8 (made by the problem from its own draw) and non-tensor inputs are
untouched. Both roles apply it the same way
(`stressed_seed` from the same request), so the reference is the problem's own answer on those
inputs, judged like any other trial; a failure there is check `stressed-input`.

A problem whose inputs are meaningful only as drawn (probabilities, a range the operator requires)
sets the module constant ``KFORGE_STRESS_INPUTS = False``: then no trial is stressed. Where the
reference's output on the stressed inputs is not finite (an exp that overflows), the judge does not
judge that trial and says so in its message.
"""

from typing import Any, List, Optional, Sequence

import torch

from .precision import is_fp8

STRESS_SCALE = 10.0
STRESS_SHIFT = 5.0
#: The module constant by which a problem turns the stressed trial off.
CONSTANT = "KFORGE_STRESS_INPUTS"
#: How a stressed trial's inputs were made, for messages.
DESCRIPTION = f"inputs scaled by {STRESS_SCALE:g} and shifted by {STRESS_SHIFT:g}; a tensor holding zeros only scaled"


def stresses(problem) -> bool:
    """Whether the problem allows the stressed trial (its `KFORGE_STRESS_INPUTS`, default True)."""
    return getattr(problem, CONSTANT, True) is not False


def stressed_seed(problem, correctness_seeds: Sequence[int], timing_seeds: Sequence[int] = ()) -> Optional[int]:
    """The correctness seed whose trial is stressed: the last of two or more; None with one seed,
    where that seed comes twice or is a timing seed too (the calls would share one reference,
    stressed and plain), or where the problem turns it off."""
    last = correctness_seeds[-1] if correctness_seeds else None
    if len(correctness_seeds) < 2 or last in correctness_seeds[:-1] or last in timing_seeds:
        return None
    if not stresses(problem):
        return None
    return correctness_seeds[-1]


def _stressed(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        if not value.is_floating_point() or is_fp8(value.dtype) or value.numel() == 0:
            return value
        with torch.no_grad():
            scaled = value * STRESS_SCALE
            return scaled if bool((value == 0).any()) else scaled + STRESS_SHIFT
    if isinstance(value, (list, tuple)):
        items = [_stressed(item) for item in value]
        return items if isinstance(value, list) else tuple(items)
    return value


def stress_inputs(values: List[Any]) -> List[Any]:
    """New inputs: each floating tensor scaled and shifted (see the module docs), the rest as given."""
    return [_stressed(value) for value in values]
