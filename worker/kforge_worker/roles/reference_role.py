"""The reference role: reference outputs (kept in this process's memory only, within the reference
store's budget, else computed again when judged), the run's tolerance (the profile's, or the one the
problem declares for its output's dtype: tolerance/output_tolerance.py), the tolerance audit (trial
by trial, over the plain correctness trials: not the stressed one, problem/stress.py), the roofline
measurement, baselines, judging. The allocator's cached device memory is
given back after each stage and each judgement, since the candidate's process uses the device at
the same time.

This process never imports the candidate.
"""

from typing import List, Optional

from ..protocol.run_device import resolve_device
from ..device.memory_usage import release_cached
from ..guard.guard_settings import parse_guard
from ..problem.declared_tolerance import declared_tolerances
from ..problem.precision import run_dtype
from ..problem.problem_folder import declared_work
from ..problem.problem_loader import load_problem, problem_folder
from ..problem.stress import stressed_seed
from ..protocol import outputs
from ..protocol.channel import Channel
from ..protocol.environment import l2_cache_bytes
from ..protocol.handover_receive import HandoverReceiver
from ..protocol.request import parse_anchor_request, parse_judge_request, parse_reference_request
from ..protocol.stages import stage
from ..timing.baselines import measure_baselines, time_eager
from ..timing.roofline_report import roofline_fields
from ..tolerance.judge import judge
from ..tolerance.output_tolerance import ToleranceChoice
from ..tolerance.tolerance_audit import ToleranceAudits, summary
from .reference_operators import reference_operators
from .reference_pace import JudgePace, ReferencePace
from .reference_store import ReferenceStore, reference_trial

MODEL_CONTEXT = "the reference Model(*get_init_inputs()) raised"


def _unique(seeds: List[int]) -> List[int]:
    return list(dict.fromkeys(seeds))


def _ready(record, receiver: HandoverReceiver, store: ReferenceStore) -> dict:
    """A `reference-ready` trial (the record's outputs may be dropped once it is described; the
    receiver keeps their structure, to check a timed output's header before its reference exists),
    with how long it took (`trial_ms`, `forward_ms`: the parent sizes the candidate's stage limits
    by them, docs/sizes.md)."""
    receiver.remember(None, record.output)
    return {
        "seed": record.seed,
        "input_digest": record.input_digest,
        "output": outputs.describe(record.output),
        **store.duration(record.seed),
    }


def run_reference(channel: Channel, message: dict) -> None:
    """The role's stages in order: the reference outputs (and the tolerance, its audit and the
    roofline), the baselines, then the parent's requests (judge, anchor, ping) until it is done."""
    request = parse_reference_request(message, parse_guard)
    run = request.run
    device = resolve_device(run.backend, run.device)
    dtype = run_dtype(run.precision)
    receiver = HandoverReceiver(request.handover_pipe, channel.send, device, request.handover_socket)
    problem, store, audits = _reference_stage(channel, request, receiver, device, dtype)

    def timing_sets():
        return [reference_trial(problem, seed, seed, device, dtype, MODEL_CONTEXT) for seed in run.timing_seeds]

    if request.baselines is not None:
        with stage(channel.send, "baseline"):
            sets = timing_sets()
            channel.send("baseline", **measure_baselines(sets, request.baselines, device, l2_cache_bytes(device)))
            del sets
            release_cached()
    _serve(channel, problem, store, audits, receiver, timing_sets, device)


def _tolerance_choice(request, problem) -> Optional[ToleranceChoice]:
    if request.tolerance is None:
        return None
    return ToleranceChoice(
        request.tolerance, request.dtype_tolerances, declared_tolerances(problem), request.declared_tolerance
    )


def _reference_stage(channel: Channel, request, receiver: HandoverReceiver, device, dtype):
    """Stage `reference`: every trial's reference output, the run's tolerance and its audit, the
    roofline and the reference's operators, sent when the stage has ended. (problem, store, audits)."""
    run = request.run
    with stage(channel.send, "reference"):
        pace = ReferencePace(request.stage_limit_ms)
        problem = load_problem(run.problem, run.preset, run.overrides)
        correctness_seeds = _unique(run.correctness_seeds)
        stressed = stressed_seed(problem, run.correctness_seeds, run.timing_seeds)
        store = ReferenceStore(problem, device, dtype, profile_seeds=correctness_seeds, stressed_seed=stressed)
        # The audit asks whether a trivial output passes on the inputs the problem draws: the
        # stressed trial is not among them (its failures are the trial's own, `stressed-input`).
        plain_seeds = [seed for seed in correctness_seeds if seed != stressed]
        audits = ToleranceAudits(lambda: (store.compute(seed).output.leaves for seed in plain_seeds))
        choice = _tolerance_choice(request, problem)

        def audit_trial(flat, inputs):
            # The run's tolerance is chosen from the first reference output (output_tolerance.py).
            chosen = choice.for_output(flat)
            audits.add_trial(flat.leaves, inputs, chosen.atol, chosen.rtol)

        def audited(seed):
            return audit_trial if choice and seed != stressed else None

        timing_only = [seed for seed in _unique(run.timing_seeds) if seed not in run.correctness_seeds]
        pace.trials_begin(problem, len(correctness_seeds), len(timing_only))
        trials = [
            _ready(store.compute(seed, with_inputs=audited(seed)), receiver, store)
            for seed in pace.paced(correctness_seeds)
        ]
        trials += [_ready(store.compute(seed), receiver, store) for seed in timing_only]
        chosen = None if choice is None else choice.chosen
        audit = None if chosen is None else summary(audits.finish(chosen.atol, chosen.rtol))
        first = run.correctness_seeds[0]
        model, inputs = reference_trial(problem, first, first, device, dtype, MODEL_CONTEXT)
        declared = declared_work(problem_folder(problem), vars(problem))
        roofline = roofline_fields(model, inputs, first, request.ceilings, declared)
        operators = reference_operators(model, inputs, first)
        del model, inputs
        release_cached()
    channel.send("reference-ops", **operators)
    channel.send("reference-ready", trials=trials, **({} if chosen is None else {"tolerance": chosen.fields()}))
    if audit is not None:
        channel.send("audit", **audit)
    channel.send("roofline", **roofline)
    return problem, store, audits


def _serve(channel: Channel, problem, store: ReferenceStore, audits, receiver, timing_sets, device) -> None:
    """The parent's requests until it closes the channel: `ping`, `anchor` (the eager baseline
    timed again) and `judge` (stage `judge`)."""
    while True:
        message = channel.receive()
        if message is None:
            return
        if message.get("type") == "ping":
            channel.send("pong")
            continue
        if message.get("type") == "anchor":
            settings = parse_anchor_request(message)
            # Built for this re-timing and dropped after it: at KernelBench's sizes the timing sets
            # are gigabytes, and judging needs the room.
            anchor_sets = timing_sets()
            eager = time_eager(anchor_sets, settings, device, l2_cache_bytes(device))
            del anchor_sets
            release_cached()
            channel.send("anchor", eager=eager)
            continue
        judge_request = parse_judge_request(message)
        with stage(channel.send, "judge"):
            pace = JudgePace(judge_request.stage_limit_ms, problem)

            def paced(entries):
                return pace.paced(entries, lambda entry: store.holds(entry.seed, entry.input_seed, entry.variant))

            judgement = judge(store.lookup, judge_request, receiver, audits.audit, paced)
            release_cached()
            channel.send("judgement", **judgement)
