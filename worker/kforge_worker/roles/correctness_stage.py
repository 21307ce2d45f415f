"""The candidate's correctness stage: a warm call, the checked trials, the generalisation trials.

Every call goes through the one protocol of a candidate's call (guard/candidate_calls.py): reseed,
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

from typing import Dict, List, Optional, Tuple

from ..guard.candidate_calls import CandidateCalls
from ..problem import generalisation
from ..problem.stress import stressed_seed
from ..protocol.errors import StageFailure

#: Failures of a generalisation trial that are recorded as its result instead of ending the role.
TRIAL_CHECKS = ("forward", "construct", "problem-inputs")


def warm_call(calls: CandidateCalls, seed: int) -> None:
    calls.run_trial(seed, "the warm-up call")


def run_trials(calls: CandidateCalls, seeds: List[int], stressed: Optional[int] = None) -> List[dict]:
    """The correctness trials, one fresh model each; the last trial, when its seed is `stressed`
    (stress.stressed_seed), has its inputs scaled and shifted (problem/stress.py)."""
    handed = []
    for index, seed in enumerate(seeds):
        entry = {"id": f"correctness-{index}", "seed": seed}
        last = index == len(seeds) - 1
        where = f"correctness trial {index} (seed {seed})"
        handed.append(calls.run_trial(seed, where, entry, stressed=last and seed == stressed, traced=index == 0))
    return handed


def run_generalisation(calls: CandidateCalls, trials: List[Tuple[int, Dict[str, int]]]) -> List[dict]:
    """Each trial's handed-over output (`id` set), or its error when the candidate raised at that size."""
    entries = []
    for index, (seed, variant) in enumerate(trials):
        entry = {"seed": seed, "variant": variant, "id": None, "input_digest": None, "error": None}
        try:
            with generalisation.overridden(calls.problem, variant):
                model, inputs = calls.trial(seed)
                output = calls.call(model, inputs, seed, f"generalisation trial {index} ({variant})")
            handed = calls.hand_over(
                output, {"id": f"generalisation-{index}", "seed": seed, "variant": variant}, inputs
            )
            entry.update(id=handed["id"], input_digest=handed["input_digest"])
            del model, inputs, output
        except StageFailure as failure:
            if failure.check not in TRIAL_CHECKS:
                raise
            entry["error"] = failure.message
        entries.append(entry)
    return entries


def run_correctness(calls: CandidateCalls, request) -> Tuple[List[dict], List[dict]]:
    """(handed-over correctness outputs, generalisation entries) — the fields of `correctness-outputs`."""
    run = request.run
    warm_call(calls, run.correctness_seeds[0])
    stressed = stressed_seed(calls.problem, run.correctness_seeds, run.timing_seeds)
    saved = run_trials(calls, run.correctness_seeds, stressed)
    seeds = generalisation.effective_seeds(
        request.generalisation_seeds, request.guard.gate_specialisation, run.correctness_seeds
    )
    trials = generalisation.plan(calls.problem, seeds)
    extra = run_generalisation(calls, trials)
    return saved, extra
