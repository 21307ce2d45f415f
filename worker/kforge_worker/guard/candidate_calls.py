"""Every call of the candidate, one protocol: the correctness trials (roles/correctness_stage.py),
the warm-up and timed calls (timing/timing_stage.py) and the trusted batches
(timing/candidate_batches.py) all go through `CandidateCalls`, the one place that enters the
run-time guard (guard_runtime.py) around a call and the problem's inputs (problem/inputs.py).

The protocol of one call:

- before: reseed everything with the call's seed (random ops in forward agree with the
  reference's), then `before_call` (poison the allocator, start the thread watch, clear the
  device's last error);
- the call: the forward without autograd (under the dispatch trace and the profiler when
  `traced`), then a synchronize of the whole device; the timing routine makes its own calls
  between `before` and `after` (timing.py);
- after: `after_call` (the device's last error, `deferred-work`, `stale-output`, threads), and for
  a traced call the judgements of what ran (`torch-fallback`, `own-kernel`);
- outputs out: a kept output is handed to the judge at once with the digest of its inputs
  (protocol/handover.py), before any more of the candidate's code runs.
"""

from typing import Any, Dict, List, Optional, Tuple

import torch

from ..device.device import synchronize
from ..problem.inputs import ALIGNMENTS, cast_inputs, make_inputs, make_model, make_trial, seed_everything
from ..protocol.errors import CONSTRUCT, FORWARD, failures_as
from ..protocol.handover import Handover
from .guard_runtime import GuardRuntime
from .input_digest import input_digest
from .policy_rejection import PolicyRejection


class CandidateCalls:
    """The candidate's models, inputs and calls in one evaluation (see the module docs)."""

    def __init__(self, problem, model_class, device: torch.device, dtype, guard: GuardRuntime, handover: Handover):
        self.problem, self.model_class, self.device, self.dtype = problem, model_class, device, dtype
        self.guard, self.handover = guard, handover

    # --- models and inputs, built as the reference builds them ---------------------------------

    def model(self, seed: int) -> torch.nn.Module:
        return make_model(self.problem, self.model_class, seed, self.device, self.dtype, **CONSTRUCT)

    def inputs(self, seed: int) -> List[Any]:
        return cast_inputs(make_inputs(self.problem, seed, self.device), self.device, self.dtype)

    def trial(self, seed: int, stressed: bool = False) -> Tuple[torch.nn.Module, List[Any]]:
        """A fresh model and its inputs for `seed`; scaled and shifted inputs when `stressed`
        (problem/stress.py)."""
        return make_trial(self.problem, self.model_class, seed, self.device, self.dtype, stressed=stressed, **CONSTRUCT)

    def construct(self, seed: int) -> Optional[str]:
        """Stage `load`: ModelNew constructed once, on `seed`; which rule gave it its parameters
        (problem/inputs.py), None when none was applied."""
        self.model(seed)
        return ALIGNMENTS[-1] if ALIGNMENTS else None

    # --- the protocol of one call --------------------------------------------------------------

    def call(self, model: torch.nn.Module, inputs: List[Any], seed: int, where: str, traced: bool = False) -> Any:
        """One checked forward call (see the module docs): `before`, the call and a synchronize,
        `after`; raises StageFailure, or PolicyRejection with the output set when the checks of a
        traced call reject what ran. With `traced`, the forward runs under the dispatch trace and
        the profiler (only the forward and, on cuda, a synchronize inside the profiler: poison and
        the output's checks stay outside them)."""
        guard = self.guard
        self.before(inputs, seed)
        with failures_as(**FORWARD):
            with torch.no_grad():
                sources = [*inputs, *model.parameters(), *model.buffers()] if traced else ()
                output = guard.forward(lambda: model(*inputs), traced, sources)
            synchronize(self.device)
        self.after(output, where)
        try:
            guard.check_dispatch(output, where)
            guard.check_own_kernel(where)
        except PolicyRejection as rejection:
            rejection.output = output
            raise
        return output

    def before(self, inputs: List[Any], seed: int) -> None:
        """Reseeds everything with the call's seed, then the guard's `before_call`."""
        seed_everything(seed)
        self.guard.before_call(inputs)

    #: Only the reseed (inside a trusted batch, where nothing else may run between calls): the
    #: function itself, so a timed call pays for no wrapper.
    reseed = staticmethod(seed_everything)

    def after(self, output: Any, where: str) -> None:
        """The guard's checks on one call's output (`after_call`), after its synchronize."""
        self.guard.after_call(output, where)

    def run_trial(
        self, seed: int, where: str, entry: Optional[dict] = None, stressed: bool = False, traced: bool = False
    ) -> Optional[dict]:
        """One trial: a fresh model and inputs (`trial`), the checked call (`call`), and the output
        handed over with `entry` (`hand_over`; dropped without `entry`, as the warm call's is). A
        traced call's output rejected by the policy is handed over before the rejection goes on."""
        model, inputs = self.trial(seed, stressed=stressed)
        try:
            output = self.call(model, inputs, seed, where, traced=traced)
        except PolicyRejection as rejection:
            if entry is None or rejection.output is None:
                raise
            # Whether the answer is right is said first: the judge takes the output before the rejection.
            self.hand_over(rejection.output, entry, inputs)
            raise
        return None if entry is None else self.hand_over(output, entry, inputs)

    def hand_over(self, output: Any, entry: Dict[str, Any], inputs: List[Any]) -> dict:
        """Hands `output` to the judge, `entry` with the digest of `inputs` added after its keys."""
        return self.handover.hand_over(output, {**entry, "input_digest": input_digest(inputs)})
