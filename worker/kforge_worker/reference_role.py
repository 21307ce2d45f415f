"""The reference role: reference outputs (kept in this process's memory only), the tolerance audit,
the roofline measurement, baselines, judging.

This process never imports the candidate.
"""

from typing import List

from . import outputs
from .baselines import measure_baselines, time_eager
from .channel import Channel
from .device import resolve_device
from .environment import l2_cache_bytes
from .judge import judge
from .precision import run_dtype
from .problem_loader import load_problem
from .reference_store import ReferenceStore, reference_trial
from .request import parse_anchor_request, parse_judge_request, parse_reference_request
from .roofline_report import roofline_fields
from .stages import stage
from .tolerance_audit import ToleranceAudits, summary

MODEL_CONTEXT = "the reference Model(*get_init_inputs()) raised"


def _unique(seeds: List[int]) -> List[int]:
    return list(dict.fromkeys(seeds))


def run_reference(channel: Channel, message: dict) -> None:
    request = parse_reference_request(message)
    run = request.run
    device = resolve_device(run.backend, run.device)
    dtype = run_dtype(run.precision)
    with stage(channel.send, "reference"):
        problem = load_problem(run.problem, run.preset)
        store = ReferenceStore(problem, device, dtype)
        kept_inputs: List = []
        correctness = [store.compute(seed, keep_inputs=kept_inputs) for seed in _unique(run.correctness_seeds)]
        timing = [store.compute(seed) for seed in _unique(run.timing_seeds) if seed not in run.correctness_seeds]
        audits = ToleranceAudits([record.output.leaves for record in correctness], kept_inputs)
        audit = None
        if request.tolerance is not None:
            audit = summary(audits.audit(request.tolerance.atol, request.tolerance.rtol))
        audits.drop_inputs()
        del kept_inputs
        model, inputs = reference_trial(problem, run.correctness_seeds[0], run.correctness_seeds[0], device, dtype,
                                        MODEL_CONTEXT)
        roofline = roofline_fields(model, inputs, run.correctness_seeds[0], request.ceilings)
        del model, inputs
    channel.send("reference-ready", trials=[
        {"seed": record.seed, "input_digest": record.input_digest, "output": outputs.describe(record.output)}
        for record in correctness + timing
    ])
    if audit is not None:
        channel.send("audit", **audit)
    channel.send("roofline", **roofline)
    def timing_sets():
        return [reference_trial(problem, seed, seed, device, dtype, MODEL_CONTEXT) for seed in run.timing_seeds]

    if request.baselines is not None:
        with stage(channel.send, "baseline"):
            sets = timing_sets()
            channel.send("baseline", **measure_baselines(sets, request.baselines, device, l2_cache_bytes(device)))
            del sets
    anchor_sets = None
    while True:
        message = channel.receive()
        if message is None:
            return
        if message.get("type") == "ping":
            channel.send("pong")
            continue
        if message.get("type") == "anchor":
            settings = parse_anchor_request(message)
            anchor_sets = anchor_sets or timing_sets()
            channel.send("anchor", eager=time_eager(anchor_sets, settings, device, l2_cache_bytes(device)))
            continue
        judge_request = parse_judge_request(message)
        with stage(channel.send, "judge"):
            channel.send("judgement", **judge(store.lookup, judge_request, audits.audit))
