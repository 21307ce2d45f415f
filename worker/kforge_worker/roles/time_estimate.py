"""An evaluation's time on this host, estimated before it runs, and sizes that fit a time budget.

Memory is not the only thing a problem's own sizes run out of: at KernelBench's sizes one
evaluation on a small cpu host takes many minutes (19_ReLU at `batch_size=256`: 6 min 24 s on a
2-core machine), and the sizes that fit its memory take longer still. This measures the pace:

- The probe is what an evaluation does over and over: one reference trial as the reference role
  computes it (inputs drawn and cast, the model built, the forward, and the float64 twin of the
  error profile) and a judgement's comparison of its output (roles/reference_store.py,
  tolerance/compare.py). It runs on this host's CPU, at the problem's sizes with its batch constant
  (the first of `shrink_order`, the one `--fit` halves first) made small enough for a quick probe:
  its inputs and output within PROBE_START_BYTES, then doubled while a probe takes less than
  PROBE_TARGET_MS, up to the sizes asked for (or PROBE_MAX_BYTES).
- An evaluation computes about EVALUATION_PROBES probes' worth at that pace: the reference stage's
  five trials with their twins, a judgement of each of the eight outputs it judges (five
  correctness trials, three timed calls), and some forty more calls at the reference's pace (the
  candidate's warm call and trials, its timed calls and input contents, the baselines), plus
  FIXED_S for the workers' start-up. Where the correctness trials' references are kept (an output
  and its float64 twin within the reference store's 512 MiB) the judge does not compute them again,
  and an evaluation is KEPT_PROBES probes' worth; in between, in proportion to the trials computed
  again. Measured on this project's 2-core machine on 2026-12-07 (docs/sizes.md, "Sizing by
  time"): honest C++ ReLU candidates on 19_ReLU (outputs not kept; build cached) took 96 s at
  `batch_size=64` and 337 s at 256 (probes of 2.8 s and 11 s), 21 s at 16; KernelBench's
  `1_Conv2D_ReLU_BiasAdd` at `batch_size=1` (outputs kept) 108 s with its probe at 6.2 s, while
  other work kept the machine's load at 11-13 during both.
- Between the sizes probed the time follows a power of the batch constant fitted to the last two
  probes (1 for elementwise problems, up to 3 where the constant is a matrix's side), or in
  proportion when only one probe was long enough to tell.

It is an estimate, meant to say "about a minute" or "about an hour" and to pick a size that takes
about as long as asked; the build of a candidate (tens of seconds for C++, cached afterwards) is
not in it.
"""

import math
import time
from dataclasses import replace
from typing import Dict, List, Optional, Tuple

import torch

from ..problem.precision import run_dtype
from ..problem.problem_loader import load_problem
from ..protocol.errors import StageFailure, describe_exception
from ..tolerance.compare import compare_outputs
from .reference_store import KEEP_BYTES, ReferenceStore
from .size_estimate import measure_shapes, shrink_order, size_constants

#: The first probe's inputs and output at most this many bytes (the batch constant halved till then).
PROBE_START_BYTES = 16 * 1024**2
#: Probes double the batch constant while one takes less than this, ms.
PROBE_TARGET_MS = 500.0
#: Nor past this many bytes of inputs and output.
PROBE_MAX_BYTES = 256 * 1024**2
#: Probes' worth of work in one evaluation (see the module docs).
EVALUATION_PROBES = 30
#: The same where the judge keeps every correctness trial's reference.
KEPT_PROBES = 16
#: Correctness trials whose references the judge needs (docs/spec.md section 4).
CORRECTNESS_TRIALS = 5
#: Seconds of an evaluation that do not follow the problem: the workers' start-up, the stages' set-up.
FIXED_S = 10.0
#: A probe whose time says nothing about the growth (timer noise), ms.
NOISE_MS = 50.0
#: No probe starts once the probes have taken this long, s.
PROBE_TOTAL_S = 30.0
#: A problem's batch constant is halved at most this many times for the first probe.
MAX_HALVINGS = 24


def _probe_ms(path: str, preset: Optional[str], precision: str, overrides: Dict) -> float:
    """One probe (see the module docs), ms by this process's clock."""
    problem = load_problem(path, preset, overrides or None)
    store = ReferenceStore(problem, torch.device("cpu"), run_dtype(precision), keep_bytes=0)
    started = time.perf_counter()
    record = store.compute(12)
    # The judge's own copy of the candidate's output, then the comparison.
    leaves = [leaf.clone() if isinstance(leaf, torch.Tensor) else leaf for leaf in record.output.leaves]
    compare_outputs(record.output, replace(record.output, leaves=leaves), 0.01, 0.01, record.output_fp64)
    return (time.perf_counter() - started) * 1000


def _bytes_at(path: str, preset: Optional[str], precision: str, overrides: Dict) -> int:
    figures = measure_shapes(load_problem(path, preset, overrides or None), precision)
    return figures["input_bytes"] + figures["output_bytes"]


def _record_bytes(problem, precision: str) -> Optional[int]:
    """Bytes of one correctness trial's reference record (the output and its float64 twin), by the
    fake-tensor estimate; None where it cannot tell."""
    try:
        figures = measure_shapes(problem, precision)
    except Exception:
        return None
    if figures.get("forward_method") != "fake":
        return None
    return figures["output_bytes"] + figures.get("output_bytes_fp64", 2 * figures["output_bytes"])


def evaluation_seconds(probe_ms: float, record_bytes: Optional[float] = None) -> float:
    """An evaluation's seconds at a probe's pace, where a correctness trial's reference (its output
    and float64 twin) takes `record_bytes` (unknown: none kept); see the module docs."""
    kept = 0 if not record_bytes else min(CORRECTNESS_TRIALS, int(KEEP_BYTES // record_bytes))
    probes = EVALUATION_PROBES - (EVALUATION_PROBES - KEPT_PROBES) * kept / CORRECTNESS_TRIALS
    return FIXED_S + probes * probe_ms / 1000


class Pace:
    """The probes taken (value of the batch constant, ms), and the probe's time at other values."""

    def __init__(self, probes: List[Tuple[int, float]]):
        self.probes = sorted(probes)

    def exponent(self) -> float:
        """The power of the batch constant that the last two probes long enough to tell follow (1 when
        fewer), within [0, 3]."""
        telling = [(value, ms) for value, ms in self.probes if ms >= NOISE_MS]
        if len(telling) < 2:
            return 1.0
        (low, low_ms), (high, high_ms) = telling[-2], telling[-1]
        return min(3.0, max(0.0, math.log(high_ms / low_ms) / math.log(high / low)))

    def probe_ms(self, value: int) -> float:
        """The probe's ms at `value`: measured, or from the nearest probe by the fitted power."""
        for probed, ms in self.probes:
            if probed == value:
                return ms
        nearest, ms = min(self.probes, key=lambda probe: abs(math.log(probe[0] / value)))
        return ms * (value / nearest) ** self.exponent()


class CannotTime(Exception):
    """The problem cannot be probed quickly: no size constant makes it small enough."""


def measure_pace(path: str, preset: Optional[str], precision: str, overrides: Dict) -> Tuple[Optional[str], Pace]:
    """(the batch constant, the probes): see the module docs. Raises CannotTime when no probe can be
    small enough (the problem has no size constant that makes it so), StageFailure when the problem
    cannot run at a probe's sizes. A probe that is under PROBE_TARGET_MS is taken again warm (the
    first call of a process pays for its set-up); no probe starts past PROBE_TOTAL_S."""
    started = time.perf_counter()
    problem = load_problem(path, preset, overrides or None)
    constants = size_constants(problem)
    order = shrink_order(constants)
    name = order[0] if order else None
    wanted = constants[name] if name else 1

    def sized(value: int) -> Dict:
        return {**overrides, name: value} if name else dict(overrides)

    value = wanted
    for _ in range(MAX_HALVINGS):
        if name is None or value <= 1 or _bytes_at(path, preset, precision, sized(value)) <= PROBE_START_BYTES:
            break
        value //= 2
    # Without a constant to make it smaller, the probe is the problem itself: only a small one is probed.
    most = PROBE_MAX_BYTES if name else PROBE_START_BYTES
    if _bytes_at(path, preset, precision, sized(value)) > most:
        what = f"at {name}={value}" if name else "at its own sizes (it has no size constant kforge can make smaller)"
        raise CannotTime(f"its inputs and output are over {most // 1024**2} MiB even {what}: too large to time quickly")
    probe_ms = _probe_ms(path, preset, precision, sized(value))
    if probe_ms < PROBE_TARGET_MS:
        probe_ms = _probe_ms(path, preset, precision, sized(value))
    probes = [(value, probe_ms)]
    while value < wanted and probes[-1][1] < PROBE_TARGET_MS and time.perf_counter() - started < PROBE_TOTAL_S:
        value = min(wanted, value * 2)
        if _bytes_at(path, preset, precision, sized(value)) > PROBE_MAX_BYTES:
            break
        probes.append((value, _probe_ms(path, preset, precision, sized(value))))
    return name, Pace(probes)


def estimate_time(
    path: str,
    preset: Optional[str],
    precision: str,
    overrides: Dict,
    budget_s: Optional[float],
    fits_memory=lambda overrides: True,
) -> dict:
    """The `time` field of the estimate command: the probes, the evaluation's seconds at the sizes
    asked for and at each halving of the batch constant (`sizes`), and with `budget_s` the largest
    halving whose evaluation takes at most that long and fits memory (`fits_memory(overrides)`,
    `fit`); or why the time could not be told (`error`)."""

    def untimed(why: str) -> dict:
        return {"constant": None, "probes": [], "evaluation_s": None, "budget_s": budget_s, "fit": None, "error": why}

    try:
        name, pace = measure_pace(path, preset, precision, overrides)
    except CannotTime as error:
        return untimed(str(error))
    except StageFailure as failure:
        return untimed(failure.message)
    except Exception as error:  # a problem that runs at its own sizes but not at a probe's
        return untimed(f"the reference could not be timed at a small size: {describe_exception(error)}")
    problem = load_problem(path, preset, overrides or None)
    constants = size_constants(problem)
    wanted = constants.get(name, 1) if name else 1
    record_bytes = _record_bytes(problem, precision)

    def seconds_at(value: int) -> float:
        # The output follows the batch constant in proportion.
        record = None if record_bytes is None else record_bytes * value / wanted
        return round(evaluation_seconds(pace.probe_ms(value), record), 1)

    result = {
        "constant": name,
        "probes": [{"value": value, "probe_ms": round(ms, 3)} for value, ms in pace.probes],
        "exponent": round(pace.exponent(), 3),
        "evaluation_s": seconds_at(wanted),
        "budget_s": budget_s,
        "fit": None,
        "error": None,
    }
    if name is None:
        return result
    # The evaluation's seconds at each halving of the batch constant, the sizes asked for first.
    halvings = []
    value = wanted
    while value >= 1 and len(halvings) <= MAX_HALVINGS:
        halvings.append({"value": value, "evaluation_s": seconds_at(value)})
        value //= 2
    result["sizes"] = halvings
    if budget_s is None:
        return result
    for size in halvings:
        sized = {**overrides, name: size["value"]}
        if size["evaluation_s"] <= budget_s and fits_memory(sized):
            result["fit"] = {"overrides": sized, "evaluation_s": size["evaluation_s"]}
            break
    return result
