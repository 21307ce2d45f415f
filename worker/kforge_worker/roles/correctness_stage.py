"""The candidate's correctness stage: a warm call, the checked trials, the generalisation trials.

Every call goes through `guarded_call`: reseed (random ops in forward agree with the reference's),
poison the allocator, run the forward without autograd, synchronize the whole device, then the
run-time guard's checks on the output. The first call is a warm call on the first seed's inputs
(its output is checked and dropped): it sets the thread baseline and the poison sizes. The first
correctness trial (a fresh model's first call, after the process's one-time set-up in the warm
call) runs under the dispatch trace and the profiler: the ATen operators its forward dispatches
(`torch-fallback`) and the GPU kernels it launches (`own-kernel`) are judged after the output's own
checks; its output is saved and judged like the others, also when the policy rejects what ran
(policy_rejection.py): the output is handed over first, so a wrong answer is reported before it.
The last of two or more correctness trials has stressed inputs (problem/stress.py: scaled and
shifted, docs/hacks.md #20, #21). Each output is handed to the judge right after its call and
checks (handover.py), before any more of the candidate's code runs; the reference outputs never exist in this process.
"""

from typing import Any, Dict, List, Optional, Tuple

import torch

from ..device.device import synchronize
from ..guard.guard_runtime import GuardRuntime
from ..guard.policy_rejection import PolicyRejection
from ..problem import generalisation
from ..problem.inputs import input_digest, make_trial, seed_everything
from ..problem.stress import stressed_seed
from ..protocol.errors import CONSTRUCT, FORWARD, StageFailure, failures_as
from ..protocol.handover import Handover

#: Failures of a generalisation trial that are recorded as its result instead of ending the role.
TRIAL_CHECKS = ("forward", "construct", "problem-inputs")


def guarded_call(
    model: torch.nn.Module,
    inputs: List[Any],
    seed: int,
    device: torch.device,
    guard: GuardRuntime,
    where: str,
    traced: bool = False,
) -> Any:
    """One checked forward call (see the module docs); raises StageFailure. With `traced`, the
    forward runs under the dispatch trace and the profiler (only the forward and, on cuda, a
    synchronize inside the profiler: poison and the output's checks stay outside them)."""
    seed_everything(seed)
    guard.before_call(inputs)
    with failures_as(**FORWARD):
        with torch.no_grad():
            sources = [*inputs, *model.parameters(), *model.buffers()] if traced else ()
            output = guard.forward(lambda: model(*inputs), traced, sources)
        synchronize(device)
    guard.after_call(output, where)
    try:
        guard.check_dispatch(output, where)
        guard.check_own_kernel(where)
    except PolicyRejection as rejection:
        rejection.output = output
        raise
    return output


def warm_call(problem, model_class, seed: int, device, dtype, guard: GuardRuntime) -> None:
    model, inputs = make_trial(problem, model_class, seed, device, dtype, **CONSTRUCT)
    guarded_call(model, inputs, seed, device, guard, "the warm-up call")


def run_trials(
    problem,
    model_class,
    seeds: List[int],
    device,
    dtype,
    guard: GuardRuntime,
    handover: Handover,
    stressed: Optional[int] = None,
) -> List[dict]:
    """The correctness trials, one fresh model each; the last trial, when its seed is `stressed`
    (stress.stressed_seed), has its inputs scaled and shifted (problem/stress.py)."""
    handed = []
    for index, seed in enumerate(seeds):
        model, inputs = make_trial(
            problem,
            model_class,
            seed,
            device,
            dtype,
            stressed=index == len(seeds) - 1 and seed == stressed,
            **CONSTRUCT,
        )
        try:
            output = guarded_call(
                model, inputs, seed, device, guard, f"correctness trial {index} (seed {seed})", traced=index == 0
            )
        except PolicyRejection as rejection:
            if rejection.output is None:
                raise
            # Whether the answer is right is said first: the judge takes the output before the rejection.
            entry = {"id": f"correctness-{index}", "seed": seed, "input_digest": input_digest(inputs)}
            handover.hand_over(rejection.output, entry)
            raise
        entry = {"id": f"correctness-{index}", "seed": seed, "input_digest": input_digest(inputs)}
        handed.append(handover.hand_over(output, entry))
        del model, inputs, output
    return handed


def run_generalisation(
    problem,
    model_class,
    trials: List[Tuple[int, Dict[str, int]]],
    device,
    dtype,
    guard: GuardRuntime,
    handover: Handover,
) -> List[dict]:
    """Each trial's handed-over output (`id` set), or its error when the candidate raised at that size."""
    entries = []
    for index, (seed, variant) in enumerate(trials):
        entry = {"seed": seed, "variant": variant, "id": None, "input_digest": None, "error": None}
        try:
            with generalisation.overridden(problem, variant):
                model, inputs = make_trial(problem, model_class, seed, device, dtype, **CONSTRUCT)
                output = guarded_call(model, inputs, seed, device, guard, f"generalisation trial {index} ({variant})")
            handed = {
                "id": f"generalisation-{index}",
                "seed": seed,
                "variant": variant,
                "input_digest": input_digest(inputs),
            }
            handover.hand_over(output, handed)
            entry.update(id=handed["id"], input_digest=handed["input_digest"])
            del model, inputs, output
        except StageFailure as failure:
            if failure.check not in TRIAL_CHECKS:
                raise
            entry["error"] = failure.message
        entries.append(entry)
    return entries


def run_correctness(
    problem, model_class, request, device, dtype, guard: GuardRuntime, handover: Handover
) -> Tuple[List[dict], List[dict]]:
    """(handed-over correctness outputs, generalisation entries) — the fields of `correctness-outputs`."""
    run = request.run
    warm_call(problem, model_class, run.correctness_seeds[0], device, dtype, guard)
    stressed = stressed_seed(problem, run.correctness_seeds, run.timing_seeds)
    saved = run_trials(problem, model_class, run.correctness_seeds, device, dtype, guard, handover, stressed)
    seeds = generalisation.effective_seeds(
        request.generalisation_seeds, request.guard.gate_specialisation, run.correctness_seeds
    )
    trials = generalisation.plan(problem, seeds)
    extra = run_generalisation(problem, model_class, trials, device, dtype, guard, handover)
    return saved, extra
