"""Input contents of the timed calls (docs/hacks.md #8, #9): same tensors, new values every call.

Each timing seed t_m gets its own model (weights from t_m, as in correctness) and its own input
tensors (the *live* set, built from t_m). Before each call the live tensors are refilled in place
(`copy_`: same data_ptr, same id, new values) from one of the model's K content sets: content 0 is
built from t_m itself, content j >= 1 from `derived_seed(t_m, j)` (seeds.py). Warm-up call w and
timed call i go to model `w % T` and `i % T`; the r-th call a model receives (warm-up calls
first) uses content `r % K`. K is the number of calls the busiest model receives, so no contents
repeat (a warm-up by time that runs past the warm-up calls asked for cycles through the warm-up's
own contents again, never the timed calls'), unless the content sets would exceed
CONTENT_POOL_BYTES: then K is that budget's count, but at least 2. Content sets that do not fit the
budget (at KernelBench's sizes one input set is gigabytes: the minimum of 2 would hold 2 x 3 extra
sets) are not held: each is drawn again from its seed when a call needs it, outside the timed
region, and dropped once copied into the live set. A cache keyed on data_ptr, id() or sampled values
therefore never sees the same contents twice (within the budget), and the sampled timed outputs are
judged against the reference of their own (model seed, input seed) pair.

Contents are drawn by the problem's own `get_inputs()` and cast as the correctness inputs are (an
fp8 input of a `native` run is made by the problem, typically drawn in float32 and cast, since
torch has no random fill for fp8); refilling copies them bytes for bytes, whatever their dtype.
"""

from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Tuple

import torch

from ..problem.precision import is_fp8
from ..problem.seeds import derived_seed

CONTENT_POOL_BYTES = 1024**3
MIN_CONTENTS = 2


class ContentSets:
    """A model's K content sets: those within the pool's budget held, the others drawn from their
    seeds on each access (`contents[j]`, `len(contents)`)."""

    def __init__(self, draw: Callable[[int], List[Any]], seeds: List[int], held: int):
        self.draw = draw
        self.seeds = seeds
        self.held = [draw(seed) for seed in seeds[:held]]

    def __len__(self) -> int:
        return len(self.seeds)

    def __getitem__(self, index: int) -> List[Any]:
        return self.held[index] if index < len(self.held) else self.draw(self.seeds[index])


@dataclass
class TimedModel:
    seed: int
    model: torch.nn.Module
    live: List[Any]
    content_seeds: List[int]
    contents: ContentSets


def input_bytes(values: Any) -> int:
    if isinstance(values, torch.Tensor):
        return values.numel() * values.element_size()
    if isinstance(values, (list, tuple)):
        return sum(input_bytes(item) for item in values)
    return 0


def calls_of_model(model_index: int, models: int, calls: int) -> int:
    """How many of `calls` calls (numbered from 0, dealt round-robin) go to model `model_index`."""
    return max(0, (calls - model_index + models - 1) // models)


def content_count(models: int, warmup_trials: int, perf_trials: int, bytes_per_set: int) -> int:
    """K: enough for every call of the busiest model to get new contents, within the budget."""
    needed = max(1, calls_of_model(0, models, warmup_trials) + calls_of_model(0, models, perf_trials))
    affordable = CONTENT_POOL_BYTES // max(1, models * bytes_per_set)
    return max(1, min(needed, max(MIN_CONTENTS, affordable)))


def content_index(phase: str, index: int, models: int, warmup_trials: int, contents: int) -> Tuple[int, int]:
    """(model index, content index) of warm-up (`phase` "warmup") or timed call `index`. A warm-up
    call past the `warmup_trials` asked for (a warm-up by time) reuses the slot of warm-up call
    `index mod warmup_trials`: it never sees contents reserved for the timed calls."""
    if phase != "timed" and warmup_trials > 0:
        index %= warmup_trials
    model_index = index % models
    rank = index // models
    if phase == "timed":
        rank += calls_of_model(model_index, models, warmup_trials)
    return model_index, rank % contents


def build_timed_models(
    calls, seeds: List[int], warmup_trials: int, perf_trials: int, contents: Optional[int] = None, refilled: bool = True
) -> List[TimedModel]:
    """One model and K content sets per timing seed, and a live input set per seed, built by
    `calls` (guard/candidate_calls.py: `model(seed)`, `inputs(seed)`) as the correctness trials
    are; `contents` forces K: 1 with the run-time checks off, when the live set is never refilled.

    With `refilled` (every call's live set is refilled before the call) and content sets too large
    for the pool to hold any, the models share one live set: its contents are replaced before every
    call whichever model makes it, so T live sets would hold (T - 1) input sets of gigabytes for
    nothing (a 6 GiB input: 12 GiB)."""
    models = []
    count = contents
    held = None
    shared = None
    for seed in seeds:
        live = shared if shared is not None else calls.inputs(seed)
        model = calls.model(seed)
        if count is None:
            count = content_count(len(seeds), warmup_trials, perf_trials, input_bytes(live))
        if held is None:
            held = min(count, CONTENT_POOL_BYTES // max(1, len(seeds) * input_bytes(live)))
            if refilled and held == 0:
                shared = live
        content_seeds = [seed] + [derived_seed(seed, j) for j in range(1, count)]
        sets = ContentSets(calls.inputs, content_seeds, held)
        models.append(TimedModel(seed=seed, model=model, live=live, content_seeds=content_seeds, contents=sets))
    return models


def refill(live: Any, content: Any) -> Any:
    """Copies `content` into `live` in place where shapes, dtypes and devices agree (lists are
    updated in place too); anything else is replaced by a copy of the content."""
    if isinstance(live, torch.Tensor) and isinstance(content, torch.Tensor):
        if live.shape == content.shape and live.dtype == content.dtype and live.device == content.device:
            if is_fp8(live.dtype):
                # Bytes for bytes: the same values, with uint8's copy kernel (every torch has it).
                live.view(torch.uint8).copy_(content.view(torch.uint8))
            else:
                live.copy_(content)
            return live
        return content.clone()
    if isinstance(live, (list, tuple)) and isinstance(content, (list, tuple)) and len(live) == len(content):
        items = [refill(old, new) for old, new in zip(live, content)]
        if isinstance(live, list):
            live[:] = items
            return live
        return type(live)(items) if type(live) is tuple else tuple(items)
    return content.clone() if isinstance(content, torch.Tensor) else content
