"""Reference outputs held in the reference role's memory, by (model seed, input seed, variant).

A record for (seed s, input seed u, variant v): with the variant's constants set (generalisation.py),
inputs from `get_inputs()` seeded with u, the model built seeded with s, the forward reseeded with
u; the same in the run's precision and (for the error profile) in float64. The correctness and
timing seeds' records (u = s, no variant) are computed in stage `reference`; the records of timed
calls (u != s) and generalisation trials are computed when a `judge` request first names them.
"""

import json
from typing import Dict, List, Optional, Tuple


from . import generalisation, outputs
from .errors import StageFailure, failures_as
from .inputs import call_model, cast_inputs, input_digest, make_inputs, make_model
from .judge import ReferenceRecord
from .precision import FLOAT64

REFERENCE_CONTEXT = dict(kind="invalid_input", check="reference-forward")
Key = Tuple[int, int, str]


def variant_key(variant: Optional[dict]) -> str:
    return json.dumps(variant or {}, sort_keys=True)


def _flatten_reference(output) -> outputs.FlatOutput:
    try:
        return outputs.flatten(output, keep_device=True)
    except outputs.OutputStructureError as error:
        raise StageFailure("invalid_input", "reference-forward",
                           f"the reference's output cannot be compared: {error}") from error


def reference_trial(problem, seed: int, input_seed: int, device, dtype, context: str):
    """(model, inputs) of the reference for a (model seed, input seed) pair: inputs first."""
    inputs = cast_inputs(make_inputs(problem, input_seed, device), device, dtype)
    model = make_model(problem, problem.Model, seed, device, dtype, context=context, **REFERENCE_CONTEXT)
    return model, inputs


class ReferenceStore:
    def __init__(self, problem, device, dtype):
        self.problem = problem
        self.device = device
        self.dtype = dtype
        self.records: Dict[Key, ReferenceRecord] = {}

    def _fp64_output(self, seed: int, input_seed: int) -> Optional[outputs.FlatOutput]:
        try:
            model, inputs = reference_trial(self.problem, seed, input_seed, self.device, FLOAT64,
                                            "the float64 reference")
            return outputs.flatten(call_model(model, inputs, input_seed, self.device), keep_device=True)
        except Exception:
            return None

    def compute(self, seed: int, input_seed: Optional[int] = None, variant: Optional[dict] = None,
                keep_inputs: Optional[List] = None) -> ReferenceRecord:
        """The record of (seed, input seed, variant), computed once, its outputs on the run's device.
        `keep_inputs`, when given, receives the inputs themselves, on that device too (for the
        degenerate-tolerance audit, which drops them once done)."""
        input_seed = seed if input_seed is None else input_seed
        key = (seed, input_seed, variant_key(variant))
        if key in self.records:
            return self.records[key]
        with generalisation.overridden(self.problem, variant):
            model, inputs = reference_trial(self.problem, seed, input_seed, self.device, self.dtype,
                                            "the reference Model(*get_init_inputs()) raised")
            digest = input_digest(inputs)
            with failures_as(context="the reference's forward raised", **REFERENCE_CONTEXT):
                output = call_model(model, inputs, input_seed, self.device)
            flat = _flatten_reference(output)
            if keep_inputs is not None:
                keep_inputs.append(inputs)
            del model, output
            fp64 = self._fp64_output(seed, input_seed)
        record = ReferenceRecord(seed=seed, input_digest=digest, output=flat, output_fp64=fp64)
        self.records[key] = record
        return record

    def lookup(self, seed: int, input_seed: Optional[int],
               variant: Optional[dict]) -> Tuple[Optional[ReferenceRecord], str]:
        """The record for a judged output, computing it when needed; (None, why) when it cannot be had."""
        problem = generalisation.variant_problem(self.problem, variant)
        if problem:
            return None, problem
        return self.compute(seed, input_seed, variant), ""

