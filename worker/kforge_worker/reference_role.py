"""The reference role: reference outputs (kept in this process's memory only), baselines, judging.

This process never imports the candidate.
"""

from typing import Dict, List

from . import outputs
from .baselines import measure_baselines
from .channel import Channel
from .device import resolve_device
from .environment import l2_cache_bytes
from .errors import StageFailure, failures_as
from .inputs import call_model, input_digest, make_trial
from .judge import ReferenceRecord, judge
from .precision import FLOAT64, run_dtype
from .problem_loader import load_problem
from .request import parse_judge_request, parse_reference_request
from .stages import stage

REFERENCE_CONTEXT = dict(kind="invalid_input", check="reference-forward")


def _flatten_reference(output) -> outputs.FlatOutput:
    try:
        return outputs.flatten(output)
    except outputs.OutputStructureError as error:
        raise StageFailure("invalid_input", "reference-forward", f"the reference's output cannot be compared: {error}") from error


def _fp64_output(problem, seed: int, device):
    """The float64 run's output, or None where the problem does not run in float64."""
    try:
        model, inputs = make_trial(problem, problem.Model, seed, device, FLOAT64,
                                   context="the float64 reference", **REFERENCE_CONTEXT)
        return outputs.flatten(call_model(model, inputs, seed, device))
    except Exception:
        return None


def reference_for_seed(problem, seed: int, device, dtype) -> ReferenceRecord:
    model, inputs = make_trial(problem, problem.Model, seed, device, dtype,
                               context="the reference Model(*get_init_inputs()) raised", **REFERENCE_CONTEXT)
    digest = input_digest(inputs)
    with failures_as(context="the reference's forward raised", **REFERENCE_CONTEXT):
        output = call_model(model, inputs, seed, device)
    flat = _flatten_reference(output)
    del model, inputs, output
    return ReferenceRecord(seed=seed, input_digest=digest, output=flat, output_fp64=_fp64_output(problem, seed, device))


def _unique(seeds: List[int]) -> List[int]:
    return list(dict.fromkeys(seeds))


def run_reference(channel: Channel, message: dict) -> None:
    request = parse_reference_request(message)
    run = request.run
    device = resolve_device(run.backend, run.device)
    dtype = run_dtype(run.precision)
    with stage(channel.send, "reference"):
        problem = load_problem(run.problem, run.preset)
        records: Dict[int, ReferenceRecord] = {
            seed: reference_for_seed(problem, seed, device, dtype)
            for seed in _unique(run.correctness_seeds + run.timing_seeds)
        }
    channel.send("reference-ready", trials=[
        {"seed": record.seed, "input_digest": record.input_digest, "output": outputs.describe(record.output)}
        for record in records.values()
    ])
    if request.baselines is not None:
        with stage(channel.send, "baseline"):
            sets = [make_trial(problem, problem.Model, seed, device, dtype,
                               context="the reference Model(*get_init_inputs()) raised", **REFERENCE_CONTEXT)
                    for seed in run.timing_seeds]
            channel.send("baseline", **measure_baselines(sets, request.baselines, device, l2_cache_bytes(device)))
            del sets
    while True:
        message = channel.receive()
        if message is None:
            return
        judge_request = parse_judge_request(message)
        with stage(channel.send, "judge"):
            channel.send("judgement", **judge(records, judge_request))
