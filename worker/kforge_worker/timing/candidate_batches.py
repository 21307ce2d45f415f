"""The candidate's trusted batches (docs/timing.md, P1): B calls back to back on input contents
never seen before, one device-wide synchronize, timed by the parent's clock from `go` to
`batch-done`; afterwards the parent names which of the B outputs to hand over, and they are
judged like the sampled timed calls.

Batch call j goes to timed model j mod T (T timing seeds) with content index
K + used[m] + j // T, where K is the contents per model of the per-call loop and used[m] counts
the batch calls model m received in earlier batches; the contents are drawn from
derived_seed(model seed, content index) (seeds.py), so they differ from every content the
per-call loop used, and the parent knows which (seed, input seed) each kept output must match.
"""

from typing import Any, Callable, List

import torch

from ..guard.candidate_calls import CandidateCalls
from ..problem.seeds import derived_seed
from ..protocol.channel import Channel
from .timing import time_batch
from .timing_dialogue import receive_go, receive_kept
from .timing_inputs import TimedModel, calls_of_model


def batch_content(models: int, contents: int, used: List[int], call: int) -> (int, int):
    """(model index, content index) of batch call `call`."""
    model_index = call % models
    return model_index, contents + used[model_index] + call // models


class CandidateBatches:
    """Runs the parent's batches between the calls of the per-call loop."""

    def __init__(self, calls: CandidateCalls, models: List[TimedModel], contents: int, channel: Channel):
        self.calls, self.models, self.contents, self.channel = calls, models, contents, channel
        self.device = calls.device
        self.used = [0] * len(models)
        self.count = 0

    def run(self, calls: int, reseed: bool = False) -> None:
        """One batch of `calls` calls: `batch-ready`, wait for `go`, run, `batch-done`, wait for
        `batch-keep`, hand the kept outputs over, `batch-outputs`. With `reseed` (a problem whose forward
        draws random numbers) every call is reseeded with its contents' seed first, inside the
        batch; otherwise the random generators are seeded once, before `batch-ready`."""
        number = self.count
        plan = [batch_content(len(self.models), self.contents, self.used, call) for call in range(calls)]
        sets = []
        for model_index, content in plan:
            timed = self.models[model_index]
            seed = derived_seed(timed.seed, content)
            sets.append((timed, seed, self.calls.inputs(seed)))
        bound = [self._bound(timed.model, inputs, seed if reseed else None) for timed, seed, inputs in sets]
        self.calls.reseed(sets[0][1])
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        self.channel.send("batch-ready", batch=number, calls=calls)
        receive_go(self.channel)
        with torch.no_grad():
            outputs, _ = time_batch(bound, self.device)
        self.channel.send("batch-done", batch=number)
        kept = receive_kept(self.channel, calls)
        samples = []
        for index in kept:
            timed, seed, inputs = sets[index]
            self.calls.after(outputs[index], f"batch {number} call {index}")
            entry = {"id": f"batch-{number}-{index}", "call": index, "seed": timed.seed, "input_seed": seed}
            samples.append(self.calls.hand_over(outputs[index], entry, inputs))
        del outputs, bound, sets
        for model_index in range(len(self.models)):
            self.used[model_index] += calls_of_model(model_index, len(self.models), calls)
        self.count += 1
        self.channel.send("batch-outputs", batch=number, samples=samples)

    def _bound(self, model, inputs, seed) -> Callable[[], Any]:
        if seed is None:
            return lambda: model(*inputs)

        reseed = self.calls.reseed  # looked up here: the call itself is timed

        def call():
            reseed(seed)
            return model(*inputs)

        return call
