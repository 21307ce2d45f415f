"""Validation of the parent's request lines (docs/worker-protocol.md), with messages that name
the field and the bad value. A bad request is a ProtocolError: the worker exits with status 2.

The request's `guard` object is the guard's to read: the role passes its parser
(guard/guard_settings.py, `parse_guard`), which runs in its place among the fields, so the
protocol's room imports nothing of the rooms above it.

Longer than the limit: these are the protocol's request schemas (CONTRIBUTING.md, convention 4,
names them), one dataclass and one parser per request type, which share the field readers at the
top and are read together against docs/worker-protocol.md."""

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Union

from ..backends.backend import Backend
from ..backends.registry import UnknownBackend, backend_for, described
from .channel import ProtocolError


#: The largest seed a request may name (seeds feed torch.manual_seed and numpy's 32-bit seeding).
MAX_SEED = 2**32 - 1
#: An override's value: a problem constant's new number or flag.
OverrideValue = Union[int, float, bool]
#: The guard's parser of the request's `guard` object (guard_settings.parse_guard), or None.
GuardParser = Optional[Callable[[dict], Any]]


def _field(message: dict, name: str, types, description: str, *, optional: bool = False) -> Any:
    if name not in message or message[name] is None:
        if optional:
            return None
        raise ProtocolError(f"the {message.get('type')!r} request lacks `{name}` ({description})")
    value = message[name]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in _as_tuple(types)):
        raise ProtocolError(f"expected `{name}` to be {description}, got {value!r}")
    return value


def _as_tuple(types) -> tuple:
    return types if isinstance(types, tuple) else (types,)


def _count(message: dict, name: str, *, optional: bool = False) -> Optional[int]:
    value = _field(message, name, int, "a non-negative integer", optional=optional)
    if value is not None and value < 0:
        raise ProtocolError(f"expected `{name}` to be a non-negative integer, got {value!r}")
    return value


def _seeds(message: dict, name: str, *, allow_empty: bool = False) -> List[int]:
    seeds = _field(message, name, list, "a list of seeds")
    if not seeds and not allow_empty:
        raise ProtocolError(f"expected `{name}` to hold at least one seed, got []")
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise ProtocolError(f"expected every entry of `{name}` to be an integer in [0, {MAX_SEED}], got {seed!r}")
    return seeds


def _path(message: dict, name: str) -> str:
    return os.path.abspath(_field(message, name, str, "a path"))


def expect_type(message: dict, *expected: str) -> str:
    kind = message.get("type")
    if kind not in expected:
        raise ProtocolError(f"expected a {' or '.join(repr(e) for e in expected)} request, got type {kind!r}")
    return kind


@dataclass(frozen=True)
class RunSettings:
    """What both roles share: the problem, backend, precision, preset, device and seeds."""

    problem: str
    #: The request's backend, resolved by its name once, here (backends/registry.py).
    backend: Backend
    precision: str
    preset: Optional[str]
    device: str
    correctness_seeds: List[int]
    timing_seeds: List[int]
    #: Module constants of the problem replaced before it runs (`--set`, overrides.py), or None.
    overrides: Optional[dict] = None


def _backend(message: dict) -> Backend:
    """The backend the request names; an unknown name is the request's fault."""
    try:
        return backend_for(_field(message, "backend", str, described()))
    except UnknownBackend as error:
        raise ProtocolError(str(error)) from None


def _run_settings(message: dict, *, timing_required: bool) -> RunSettings:
    return RunSettings(
        problem=_path(message, "problem"),
        backend=_backend(message),
        precision=_field(message, "precision", str, "fp32, fp16, bf16 or native"),
        preset=_field(message, "preset", str, "a preset name", optional=True),
        device=_field(message, "device", str, "`cpu` or `cuda:N`"),
        correctness_seeds=_seeds(message, "correctness_seeds"),
        timing_seeds=_seeds(message, "timing_seeds", allow_empty=not timing_required),
        overrides=parse_overrides(message.get("overrides")),
    )


@dataclass(frozen=True)
class Baselines:
    """`budget_ms`: the host time each baseline's warm-up and timed calls may take (None: no limit);
    past it the timed calls stop, never before MIN_BUDGET_CALLS of them. `warmup_ms`: after the
    `warmup_trials` warm-up calls (at least one), warm up on until this much host time has passed
    (timing.warmup_call_limit calls at most, a tenth of the budget at most)."""

    eager: bool
    compile: bool
    perf_trials: int
    warmup_trials: int
    budget_ms: Optional[float] = None
    warmup_ms: float = 0.0


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


@dataclass(frozen=True)
class Ceilings:
    """Measured device ceilings: copy bandwidth (bytes/s) and the precision's peak rate (FLOP/s)."""

    bandwidth_bytes_per_s: float
    peak_flops_per_s: Optional[float]


@dataclass(frozen=True)
class ReferenceRequest:
    run: RunSettings
    baselines: Optional[Baselines]
    #: The `guard` object as the role's parser gave it (guard_settings.GuardSettings); None without one.
    guard: Any = None
    tolerance: Optional[Tolerance] = None
    #: The profile's tolerance per output dtype (`--precision native`), by dtype name; empty: `tolerance`.
    dtype_tolerances: Dict[str, Tolerance] = field(default_factory=dict)
    #: Whether a tolerance the problem declares (KFORGE_TOLERANCE) wins over the profile's.
    declared_tolerance: bool = False
    ceilings: Optional[Ceilings] = None
    generalisation_seeds: List[int] = ()
    #: The parent's limit on the reference stage, ms (None: not said): a problem too slow at these
    #: sizes for it is a `fault` after its first trial (reference_pace.py), not a kill at the limit.
    stage_limit_ms: Optional[float] = None
    #: Where this worker makes the hand-over pipe (a FIFO) that the candidate writes outputs into
    #: (handover_receive.py); None: outputs come by descriptor only.
    handover_pipe: Optional[str] = None
    #: The candidate's hand-over socket, which its launcher made (handover_socket.py); None: cuda
    #: outputs come by pipe.
    handover_socket: Optional[str] = None


def _tolerance(message: dict) -> Optional[Tolerance]:
    atol = _field(message, "atol", (int, float), "a non-negative number", optional=True)
    rtol = _field(message, "rtol", (int, float), "a non-negative number", optional=True)
    if atol is None and rtol is None:
        return None
    if atol is None or rtol is None:
        raise ProtocolError("give both `atol` and `rtol`, or neither")
    if atol < 0 or rtol < 0:
        raise ProtocolError(f"expected `atol` and `rtol` to be non-negative, got {atol!r} and {rtol!r}")
    return Tolerance(float(atol), float(rtol))


def _dtype_tolerances(message: dict) -> Dict[str, Tolerance]:
    raw = _field(message, "dtype_tolerances", dict, "an object from dtype name to {atol, rtol}", optional=True)
    tolerances = {}
    for name, entry in (raw or {}).items():
        if not isinstance(entry, dict):
            raise ProtocolError(f"expected `dtype_tolerances.{name}` to be an object {{atol, rtol}}, got {entry!r}")
        tolerance = _tolerance({"type": "dtype_tolerances", **entry})
        if tolerance is None:
            raise ProtocolError(f"the `dtype_tolerances.{name}` entry lacks `atol` and `rtol`")
        tolerances[name] = tolerance
    return tolerances


def _ceilings(message: dict) -> Optional[Ceilings]:
    raw = _field(message, "ceilings", dict, "an object {bandwidth_bytes_per_s, peak_flops_per_s}", optional=True)
    if raw is None:
        return None
    raw = {"type": "ceilings", **raw}
    bandwidth = _field(raw, "bandwidth_bytes_per_s", (int, float), "a positive number (bytes/s)")
    peak = _field(raw, "peak_flops_per_s", (int, float), "a positive number (FLOP/s) or null", optional=True)
    if bandwidth <= 0 or (peak is not None and peak <= 0):
        raise ProtocolError(f"expected positive ceilings, got bandwidth {bandwidth!r} and peak {peak!r}")
    return Ceilings(float(bandwidth), None if peak is None else float(peak))


def _generalisation_seeds(message: dict) -> List[int]:
    if message.get("generalisation_seeds") is None:
        return []
    return _seeds(message, "generalisation_seeds", allow_empty=True)


def _budget(raw: dict, name: str = "budget_ms") -> Optional[float]:
    value = _field(raw, name, (int, float), "a positive number of milliseconds or null", optional=True)
    if value is not None and value <= 0:
        raise ProtocolError(f"expected `{name}` to be a positive number of milliseconds, got {value!r}")
    return None if value is None else float(value)


def _warmup_ms(raw: dict) -> float:
    value = _field(raw, "warmup_ms", (int, float), "a non-negative number of milliseconds", optional=True)
    if value is not None and not 0 <= value < float("inf"):
        raise ProtocolError(f"expected `warmup_ms` to be a non-negative number of milliseconds, got {value!r}")
    return 0.0 if value is None else float(value)


def parse_reference_request(message: dict, parse_guard: GuardParser = None) -> ReferenceRequest:
    expect_type(message, "reference")
    raw = _field(message, "baselines", dict, "an object or null", optional=True)
    baselines = None
    if raw is not None:
        raw = {"type": "baselines", **raw}
        baselines = Baselines(
            eager=_field(raw, "eager", bool, "true or false"),
            compile=_field(raw, "compile", bool, "true or false"),
            perf_trials=_count(raw, "perf_trials"),
            warmup_trials=_count(raw, "warmup_trials"),
            budget_ms=_budget(raw),
            warmup_ms=_warmup_ms(raw),
        )
    return ReferenceRequest(
        run=_run_settings(message, timing_required=baselines is not None),
        baselines=baselines,
        guard=None if parse_guard is None else parse_guard(message),
        tolerance=_tolerance(message),
        dtype_tolerances=_dtype_tolerances(message),
        declared_tolerance=bool(_field(message, "declared_tolerance", bool, "true or false", optional=True)),
        ceilings=_ceilings(message),
        generalisation_seeds=_generalisation_seeds(message),
        stage_limit_ms=_budget(message, "stage_limit_ms"),
        handover_pipe=_optional_path(message, "handover_pipe"),
        handover_socket=_optional_path(message, "handover_socket"),
    )


def parse_anchor_request(message: dict) -> Baselines:
    """`anchor`: re-time eager now (docs/timing.md, re-anchoring), as a `Baselines` of eager only."""
    expect_type(message, "anchor")
    perf_trials = _count(message, "perf_trials")
    if perf_trials < 1:
        raise ProtocolError(f"expected `perf_trials` of `anchor` to be a positive integer, got {perf_trials!r}")
    return Baselines(
        eager=True,
        compile=False,
        perf_trials=perf_trials,
        warmup_trials=_count(message, "warmup_trials"),
        budget_ms=_budget(message),
        warmup_ms=_warmup_ms(message),
    )


@dataclass(frozen=True)
class CandidateRequest:
    run: RunSettings
    candidate: str
    perf_trials: int
    warmup_trials: int
    build_dir: str
    #: The `guard` object as the role's parser gave it (guard_settings.GuardSettings); None without one.
    guard: Any = None
    generalisation_seeds: List[int] = ()
    cross_check: bool = False
    #: The hand-over pipe the judge made (handover.py); None: outputs travel by descriptor only.
    handover_pipe: Optional[str] = None
    #: Warm-up by time (the parent paces it): the parent may ask for warm-up calls past
    #: `warmup_trials`, up to timing.warmup_call_limit(warmup_trials, warmup_ms).
    warmup_ms: float = 0.0


def parse_candidate_request(message: dict, parse_guard: GuardParser = None) -> CandidateRequest:
    """The candidate request. It never names the timed calls whose outputs will be judged: the
    parent says so after each call (timing_dialogue.py), so a `sample_calls` field is refused."""
    expect_type(message, "candidate")
    perf_trials = _count(message, "perf_trials")
    if "sample_calls" in message:
        raise ProtocolError(
            "the candidate request carries `sample_calls`: the parent decides which timed outputs "
            "to keep after each call (`step`), never in advance; drop the field"
        )
    return CandidateRequest(
        run=_run_settings(message, timing_required=perf_trials > 0),
        candidate=_path(message, "candidate"),
        perf_trials=perf_trials,
        warmup_trials=_count(message, "warmup_trials"),
        build_dir=_path(message, "build_dir"),
        guard=None if parse_guard is None else parse_guard(message),
        generalisation_seeds=_generalisation_seeds(message),
        cross_check=bool(_field(message, "cross_check", bool, "true or false", optional=True)),
        handover_pipe=_optional_path(message, "handover_pipe"),
        warmup_ms=_warmup_ms(message),
    )


def parse_overrides(raw) -> Optional[Dict[str, OverrideValue]]:
    """The request's `overrides` (absent or null: none); a bad one is a ProtocolError."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ProtocolError(f"expected `overrides` to be an object of problem constants, got {raw!r}")
    for name, value in raw.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ProtocolError(f"expected every key of `overrides` to be a Python identifier, got {name!r}")
        if not isinstance(value, (int, float, bool)):
            raise ProtocolError(f"expected `overrides.{name}` to be a number or a boolean, got {value!r}")
    return dict(raw)


def _optional_path(message: dict, name: str) -> Optional[str]:
    return None if message.get(name) is None else _path(message, name)


@dataclass(frozen=True)
class JudgedOutput:
    """One output to judge: the model's seed, the seed of its input contents (the model's own
    seed unless a timed call said otherwise) and the problem constants it ran with (None: the
    preset's)."""

    seed: int
    #: The hand-over's id (`correctness-0`, `timed-57`, …).
    id: str
    input_digest: Optional[str]
    input_seed: Optional[int] = None
    variant: Optional[dict] = None
    #: The candidate's own description of the output (`skeleton`, `leaf_info`, `leaves`, `ipc`),
    #: untrusted: handover_receive.py checks it against the reference's output, and what does not
    #: fit is the candidate's verdict, never a protocol error.
    header: Optional[dict] = None

    @property
    def contents_seed(self) -> int:
        return self.seed if self.input_seed is None else self.input_seed


def _variant(entry: dict) -> Optional[dict]:
    variant = _field(entry, "variant", dict, "an object of problem constants", optional=True)
    if variant is None:
        return None
    for name, value in variant.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ProtocolError(f"expected `variant.{name}` to be a positive integer, got {value!r}")
    return dict(variant)


@dataclass(frozen=True)
class JudgeRequest:
    atol: float
    rtol: float
    outputs: List[JudgedOutput]
    #: The judge stage's limit, ms (None: no pace; JudgePace in roles/reference_pace.py).
    stage_limit_ms: Optional[float] = None


def parse_judge_request(message: dict) -> JudgeRequest:
    expect_type(message, "judge")
    atol = _field(message, "atol", (int, float), "a non-negative number")
    rtol = _field(message, "rtol", (int, float), "a non-negative number")
    if atol < 0 or rtol < 0:
        raise ProtocolError(f"expected `atol` and `rtol` to be non-negative, got {atol!r} and {rtol!r}")
    outputs = []
    for entry in _field(message, "outputs", list, "a list of {id, seed, input_digest, skeleton, leaf_info, leaves}"):
        if not isinstance(entry, dict):
            raise ProtocolError(f"expected every entry of `outputs` to be an object, got {entry!r}")
        entry = {"type": "judge output", **entry}
        outputs.append(
            JudgedOutput(
                seed=_field(entry, "seed", int, "a seed"),
                id=_field(entry, "id", str, "a hand-over id"),
                input_digest=_field(entry, "input_digest", str, "a hex digest", optional=True),
                input_seed=_field(entry, "input_seed", int, "a seed", optional=True),
                variant=_variant(entry),
                header={key: entry.get(key) for key in ("skeleton", "leaf_info", "leaves", "ipc")},
            )
        )
    return JudgeRequest(
        atol=float(atol), rtol=float(rtol), outputs=outputs, stage_limit_ms=_budget(message, "stage_limit_ms")
    )
