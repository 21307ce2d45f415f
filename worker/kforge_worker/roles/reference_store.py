"""Reference outputs held in the reference role's memory, by (model seed, input seed, variant).

A record for (seed s, input seed u, variant v): with the variant's constants set (generalisation.py),
inputs from `get_inputs()` seeded with u, the model built seeded with s, the forward reseeded with
u; the same in the run's precision and, for the records of the error profile (the correctness
trials' and the generalisation trials'), in float64: inputs, parameters and buffers of every
floating dtype (fp8, bf16 and fp16 under `--precision native` too) cast to float64. Where the
float64 twin raises (an operator with no float64 kernel) and the run holds a floating tensor
narrower than float32 (an input, a weight or the output: fp16, bf16, fp8), the twin is run in
float32 instead, and the record says which (`high_precision_dtype`); where neither runs the
record has no twin and the float64 errors are null. A timed call's output is judged against the
run's precision only (the verdict's error profile is the correctness trials'), so its record has no
float64 twin: at KernelBench's sizes the twin took twice the run's memory (inputs, weights and
output in float64) and a float64 forward for every timed output judged. The correctness and
timing seeds' records (u = s, no variant) are computed in stage `reference`; the records of timed
calls (u != s) and generalisation trials are computed when a `judge` request first names them.

Memory: a record's outputs (run precision and float64) are kept only while the kept records fit
KEEP_BYTES; past that only the digest of its inputs is kept, and the outputs are computed again
(from the same seeds: the same inputs, weights and forward) when a judge request names them. At
KernelBench's own sizes (a 6 GiB output has a 12 GiB float64 twin) holding every trial's outputs
would take more memory than the device has; recomputing one trial at a time needs one trial's.
"""

import json
import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple


from ..device.memory_usage import trim_host
from ..problem import generalisation
from ..guard.input_digest import input_digest
from ..problem.inputs import call_model, cast_inputs, make_inputs, make_model
from ..problem.precision import FLOAT32, FLOAT64, dtype_name, narrow_floats
from ..problem.stress import stress_inputs
from ..protocol import outputs
from ..protocol.errors import StageFailure, failures_as, is_out_of_memory
from ..tolerance.judge import ReferenceRecord

REFERENCE_CONTEXT = dict(kind="invalid_input", check="reference-forward")
Key = Tuple[int, int, str]
#: Bytes of reference outputs (both precisions) kept between stages; the rest is recomputed.
KEEP_BYTES = 512 * 1024**2
#: Called with a record's output and its inputs while the inputs still exist (the tolerance audit).
InputsVisitor = Callable[[outputs.FlatOutput, List[Any]], None]


def variant_key(variant: Optional[dict]) -> str:
    return json.dumps(variant or {}, sort_keys=True)


def record_key(seed: int, input_seed: Optional[int], variant: Optional[dict]) -> tuple:
    """The key of a record: (seed, input seed — the seed when None —, variant)."""
    return (seed, seed if input_seed is None else input_seed, variant_key(variant))


def output_bytes(flat: Optional[outputs.FlatOutput]) -> int:
    if flat is None:
        return 0
    return sum(leaf.numel() * leaf.element_size() for leaf in flat.leaves if hasattr(leaf, "element_size"))


def _flatten_reference(output) -> outputs.FlatOutput:
    try:
        return outputs.flatten(output, keep_device=True)
    except outputs.OutputStructureError as error:
        raise StageFailure(
            "invalid_input", "reference-forward", f"the reference's output cannot be compared: {error}"
        ) from error


def reference_trial(problem, seed: int, input_seed: int, device, dtype, context: str, stressed: bool = False):
    """(model, inputs) of the reference for a (model seed, input seed) pair: inputs first, scaled
    and shifted before the cast when `stressed` (problem/stress.py)."""
    inputs = make_inputs(problem, input_seed, device)
    inputs = cast_inputs(stress_inputs(inputs) if stressed else inputs, device, dtype)
    model = make_model(problem, problem.Model, seed, device, dtype, context=context, **REFERENCE_CONTEXT)
    return model, inputs


class ReferenceStore:
    def __init__(
        self,
        problem,
        device,
        dtype,
        keep_bytes: int = KEEP_BYTES,
        profile_seeds: Iterable[int] = (),
        stressed_seed: Optional[int] = None,
    ):
        """`profile_seeds`: the correctness seeds, whose records (input seed = seed) and the variants'
        carry the float64 twin; empty: every record does. `stressed_seed`: the correctness seed
        whose trial has stressed inputs (problem/stress.py), its record (input seed = seed, no
        variant) computed on them."""
        self.problem = problem
        self.stressed_seed = stressed_seed
        self.device = device
        self.dtype = dtype
        self.keep_bytes = keep_bytes
        self.profile_seeds = frozenset(profile_seeds)
        self.kept_bytes = 0
        self.records: Dict[Key, ReferenceRecord] = {}
        self.digests: Dict[Key, str] = {}
        self.recomputed = 0
        #: How long each record computed in the run's precision took, by key (the pace of docs/sizes.md,
        #: "Stage limits"): `trial_ms` from drawing the inputs to the forward's return (inputs cast,
        #: their digest, the model built: what the candidate's process does for a trial), and
        #: `forward_ms` the forward alone; the float64 twin is not counted.
        self.durations: Dict[Key, Dict[str, float]] = {}

    def is_stressed(self, seed: int, input_seed: Optional[int], variant: Optional[dict]) -> bool:
        """Whether the record of (seed, input seed, variant) is the stressed trial's."""
        return not variant and (input_seed is None or input_seed == seed) and seed == self.stressed_seed

    def _twin_output(self, seed: int, input_seed: int, dtype, stressed: bool) -> Optional[outputs.FlatOutput]:
        """The reference run with every floating tensor in `dtype`, or None where it raises (but
        for running out of memory, which is the machine's)."""
        try:
            model, inputs = reference_trial(
                self.problem, seed, input_seed, self.device, dtype, f"the {dtype_name(dtype)} reference", stressed
            )
            return outputs.flatten(call_model(model, inputs, input_seed, self.device), keep_device=True)
        except StageFailure as failure:
            if failure.check == "oom":
                raise
            return None
        except Exception as error:
            if is_out_of_memory(error):
                raise
            return None

    def _high_precision_output(
        self, seed: int, input_seed: int, narrow: bool, stressed: bool
    ) -> Tuple[Optional[outputs.FlatOutput], Optional[str]]:
        """(the error profile's twin, `float64` or `float32`), or (None, None): float64 first,
        float32 where float64 raises and the run is narrower than float32 (see the module docs)."""
        for dtype in (FLOAT64, FLOAT32) if narrow else (FLOAT64,):
            twin = self._twin_output(seed, input_seed, dtype, stressed)
            if twin is not None:
                return twin, dtype_name(dtype)
        return None, None

    def compute(
        self,
        seed: int,
        input_seed: Optional[int] = None,
        variant: Optional[dict] = None,
        with_inputs: Optional[InputsVisitor] = None,
    ) -> ReferenceRecord:
        """The record of (seed, input seed, variant), its outputs on the run's device: kept from an
        earlier call when they fit KEEP_BYTES, else computed (again). `with_inputs`, when given, is
        called with the output and the inputs (on that device) before the inputs are dropped."""
        input_seed = seed if input_seed is None else input_seed
        key = record_key(seed, input_seed, variant)
        if key in self.records:
            return self.records[key]
        stressed = self.is_stressed(seed, input_seed, variant)
        with generalisation.overridden(self.problem, variant):
            started = time.perf_counter()
            model, inputs = reference_trial(
                self.problem,
                seed,
                input_seed,
                self.device,
                self.dtype,
                "the reference Model(*get_init_inputs()) raised",
                stressed,
            )
            digest = input_digest(inputs)
            forward_started = time.perf_counter()
            with failures_as(context="the reference's forward raised", **REFERENCE_CONTEXT):
                output = call_model(model, inputs, input_seed, self.device)
            ended = time.perf_counter()
            self.durations[key] = {
                "trial_ms": round((ended - started) * 1000, 3),
                "forward_ms": round((ended - forward_started) * 1000, 3),
            }
            flat = _flatten_reference(output)
            narrow = narrow_floats([inputs, list(model.parameters()), list(model.buffers()), flat.leaves])
            del model, output
            if with_inputs is not None:
                with_inputs(flat, inputs)
            del inputs
            profiled = not self.profile_seeds or variant or (input_seed == seed and seed in self.profile_seeds)
            fp64, twin_dtype = (
                self._high_precision_output(seed, input_seed, narrow, stressed) if profiled else (None, None)
            )
            trim_host()
        self._same_inputs_again(key, digest, input_seed)
        record = ReferenceRecord(
            seed=seed,
            input_digest=digest,
            output=flat,
            output_fp64=fp64,
            high_precision_dtype=twin_dtype,
            stressed=stressed,
        )
        self._keep(key, record)
        return record

    def _same_inputs_again(self, key: Key, digest: str, input_seed: int) -> None:
        """A record computed again must have had the same inputs: the problem's draw is the seed's."""
        known = self.digests.get(key)
        if known is not None and known != digest:
            raise StageFailure(
                "invalid_input",
                "problem-inputs",
                f"the problem's get_inputs() gave other inputs for seed {input_seed} the second time: "
                f"its inputs must depend only on the seed (torch's, numpy's and random's generators)",
            )
        self.recomputed += known is not None
        self.digests[key] = digest

    def _keep(self, key: Key, record: ReferenceRecord) -> None:
        """Keeps the record while the kept outputs fit KEEP_BYTES."""
        size = output_bytes(record.output) + output_bytes(record.output_fp64)
        if self.kept_bytes + size <= self.keep_bytes:
            self.records[key] = record
            self.kept_bytes += size

    def duration(self, seed: int, input_seed: Optional[int] = None, variant: Optional[dict] = None) -> Dict[str, float]:
        """`{"trial_ms", "forward_ms"}` of the last time the record was computed ({} before)."""
        return dict(self.durations.get(record_key(seed, input_seed, variant), {}))

    def holds(self, seed: int, input_seed: Optional[int], variant: Optional[dict]) -> bool:
        """Whether the record of (seed, input seed, variant) is kept (a lookup needs no computing)."""
        return record_key(seed, input_seed, variant) in self.records

    def lookup(
        self, seed: int, input_seed: Optional[int], variant: Optional[dict]
    ) -> Tuple[Optional[ReferenceRecord], str]:
        """The record for a judged output, computing it when needed; (None, why) when it cannot be had."""
        problem = generalisation.variant_problem(self.problem, variant)
        if problem:
            return None, problem
        return self.compute(seed, input_seed, variant), ""
