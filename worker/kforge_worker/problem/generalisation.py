"""The generalisation pass (docs/hacks.md #13): correctness trials at other sizes than the benchmark's.

A variant sets problem constants for the duration of one trial. The worker varies the batch
dimension only, the one constant every KernelBench-style problem can change without breaking its
weights: when the problem module has an integer `batch_size` B (after the preset), the variants
are `{"batch_size": 2B}` and `{"batch_size": B // 2}` (the latter only when B >= 2). A problem
without `batch_size` has no variants (the pass is reported as skipped).

Seeds: the request's `generalisation_seeds`, or when it has none and `guard.gate_specialisation`
is true, `derived_seed(correctness_seeds[0], 1000 + i)` for i = 0, 1. Variant i runs with seed
`seeds[i % len(seeds)]`. Both roles build the same plan from the same request.
"""

from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional, Tuple

from .seeds import derived_seed

BATCH_CONSTANT = "batch_size"
DERIVED_SEED_OFFSET = 1000
DERIVED_SEED_COUNT = 2


def variants(problem) -> List[Dict[str, int]]:
    """The constant overrides to try for this problem (see the module docs)."""
    batch = problem.__dict__.get(BATCH_CONSTANT)
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        return []
    found = [{BATCH_CONSTANT: batch * 2}]
    if batch >= 2:
        found.append({BATCH_CONSTANT: batch // 2})
    return found


def effective_seeds(requested: List[int], gate: bool, correctness_seeds: List[int]) -> List[int]:
    if requested:
        return list(requested)
    if gate:
        return [derived_seed(correctness_seeds[0], DERIVED_SEED_OFFSET + index) for index in range(DERIVED_SEED_COUNT)]
    return []


def plan(problem, seeds: List[int]) -> List[Tuple[int, Dict[str, int]]]:
    """(seed, variant) for each generalisation trial; empty when there are no seeds or variants."""
    if not seeds:
        return []
    return [(seeds[index % len(seeds)], variant) for index, variant in enumerate(variants(problem))]


def variant_problem(problem, variant: Optional[Dict[str, int]]) -> Optional[str]:
    """Why `variant` cannot be applied to `problem` (a constant it lacks or that is not an int)."""
    for name in variant or {}:
        value = problem.__dict__.get(name)
        if isinstance(value, bool) or not isinstance(value, int):
            return f"the problem has no integer constant {name!r} to vary"
    return None


@contextmanager
def overridden(problem, variant: Optional[Dict[str, int]]) -> Iterator[None]:
    """Sets the variant's constants as module globals of the problem, restoring them afterwards."""
    saved = {name: problem.__dict__[name] for name in (variant or {})}
    for name, value in (variant or {}).items():
        setattr(problem, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(problem, name, value)
