"""`python3 -m kforge_worker audit PROBLEM [--preset cpu] [--atol 0.01 --rtol 0.01] [--declared-tolerance]`.

Computes the problem's reference outputs for a few seeds (on the cpu unless `--device` says
otherwise) and prints one JSON object on stdout: whether each trivial output (zeros, the
reference's mean, ones, the input itself) passes the tolerance in every trial, and whether the
problem is degenerate under it (docs/worker-protocol.md, "The audit command"). With
`--declared-tolerance` the tolerance the problem declares for its output's dtype (`KFORGE_TOLERANCE`)
replaces `--atol`/`--rtol`, as it does in a run under the `kernelbench` profile. Exit status 0
after printing the audit; 1 when the problem cannot be audited (the object then holds `error`);
2 when the command is misused.
"""

import argparse
import json
import sys
import time
from typing import Dict, List, Optional, Tuple

from ..protocol.run_device import backend_of_device, resolve_device
from ..problem.overrides import Value
from ..problem.declared_tolerance import declared_tolerances
from ..problem.precision import PRECISIONS, run_dtype
from ..problem.problem_loader import load_problem
from ..problem.tensor_sizes import describe_tensors
from ..protocol.channel import ProtocolError
from ..protocol.errors import StageFailure
from ..protocol.machine_fault import MachineFault
from ..protocol.request import Tolerance
from ..tolerance.output_tolerance import ToleranceChoice
from ..tolerance.tolerance_audit import ToleranceAudits, summary
from .reference_pace import ReferencePace
from .reference_store import ReferenceStore

DEFAULT_SEEDS = (11, 12, 13, 14, 15)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        self.print_usage(sys.stderr)
        print(f"kforge_worker audit: {message}", file=sys.stderr)
        raise SystemExit(2)


def _seeds(text: str) -> List[int]:
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"expected comma-separated integer seeds, got {text!r}") from error
    if not seeds or any(seed < 0 or seed >= 2**32 for seed in seeds):
        raise argparse.ArgumentTypeError(f"expected seeds in [0, 2^32), got {text!r}")
    return seeds


def _override(text: str) -> Tuple[str, Value]:
    """`NAME=VALUE` of `--set`: an integer, a float or true/false."""
    name, separator, value = text.partition("=")
    name = name.strip()
    if not separator or not name.isidentifier():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE (e.g. batch_size=256), got {text!r}")
    value = value.strip()
    if value.lower() in ("true", "false"):
        return name, value.lower() == "true"
    for kind in (int, float):
        try:
            return name, kind(value)
        except ValueError:
            continue
    raise argparse.ArgumentTypeError(f"expected a number or true/false after {name}=, got {value!r}")


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"expected a non-negative number, got {text!r}") from error
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative number, got {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    command = _Parser(
        prog="python3 -m kforge_worker audit", description="Does a trivial output pass this problem's tolerance?"
    )
    command.add_argument("problem", help="the problem file (KernelBench format)")
    command.add_argument("--preset", default=None, help="a KFORGE_PRESETS entry, e.g. cpu or gpu")
    command.add_argument("--atol", type=_tolerance, default=0.01, help="absolute tolerance (default 0.01)")
    command.add_argument("--rtol", type=_tolerance, default=0.01, help="relative tolerance (default 0.01)")
    command.add_argument("--precision", choices=tuple(PRECISIONS), default="fp32")
    command.add_argument(
        "--declared-tolerance",
        action="store_true",
        help="the tolerance the problem declares for its output's dtype (KFORGE_TOLERANCE) wins over --atol/--rtol",
    )
    command.add_argument("--device", default="cpu", help="cpu (default) or cuda:N")
    command.add_argument(
        "--seeds", type=_seeds, default=list(DEFAULT_SEEDS), help="comma-separated seeds (default 11,12,13,14,15)"
    )
    command.add_argument(
        "--set",
        dest="overrides",
        type=_override,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="replace a module constant of the problem (repeatable)",
    )
    command.add_argument(
        "--limit-ms",
        type=float,
        default=None,
        help="the caller's time limit: stop after the first trial (check audit-too-slow) when the others would not fit",
    )
    command.add_argument(
        "--started-at-ms",
        type=float,
        default=None,
        help="when the caller started this process (ms since the epoch), from which --limit-ms counts",
    )
    return command


def audit_problem(
    problem_path: str,
    preset: Optional[str],
    atol: float,
    rtol: float,
    precision: str,
    device_name: str,
    seeds: List[int],
    overrides: Optional[Dict[str, Value]] = None,
    limit_ms: Optional[float] = None,
    started_at_ms: Optional[float] = None,
    declared_tolerance: bool = False,
) -> dict:
    """The audit object printed by the command (raises StageFailure, ProtocolError, or MachineFault
    `time` when `limit_ms` is given and the trials at the first one's pace would not fit it)."""
    spent_ms = 0.0 if started_at_ms is None else max(0.0, time.time() * 1000 - started_at_ms)
    pace = ReferencePace(limit_ms, what="audit", spent_ms=spent_ms)
    device = resolve_device(backend_of_device(device_name), device_name)
    dtype = run_dtype(precision)
    problem = load_problem(problem_path, preset, overrides)
    store = ReferenceStore(problem, device, dtype)
    audits = ToleranceAudits(lambda: ())
    shapes: Dict[str, list] = {}
    choice = ToleranceChoice(Tolerance(atol, rtol), {}, declared_tolerances(problem), declared_tolerance)

    def trial(flat, inputs) -> None:
        if not shapes:  # the first trial's inputs and outputs, described while they are alive
            shapes.update(inputs=describe_tensors(inputs), outputs=describe_tensors(flat.leaves))
        chosen = choice.for_output(flat)
        audits.add_trial(flat.leaves, inputs, chosen.atol, chosen.rtol)

    unique = list(dict.fromkeys(seeds))
    pace.trials_begin(problem, len(unique), 0)
    for seed in pace.paced(unique):
        store.compute(seed, with_inputs=trial)
    chosen = choice.chosen
    result = None if chosen is None else audits.finish(chosen.atol, chosen.rtol)
    if result is None:
        raise StageFailure("invalid_input", "reference-forward", "the problem produced no reference outputs")
    return {
        "problem": problem_path,
        "preset": preset,
        "precision": precision,
        "device": str(device),
        "seeds": list(dict.fromkeys(seeds)),
        **({"problem_overrides": overrides} if overrides else {}),
        **summary(result),
        "tolerance_source": chosen.source,
        "tolerance_dtype": chosen.dtype,
        "inputs": shapes.get("inputs", []),
        "outputs": shapes.get("outputs", []),
    }


def main(argv: List[str]) -> int:
    arguments = parser().parse_args(argv)
    try:
        result = audit_problem(
            arguments.problem,
            arguments.preset,
            arguments.atol,
            arguments.rtol,
            arguments.precision,
            arguments.device,
            arguments.seeds,
            dict(arguments.overrides),
            arguments.limit_ms,
            arguments.started_at_ms,
            arguments.declared_tolerance,
        )
    except ProtocolError as error:
        print(f"kforge_worker audit: {error}", file=sys.stderr)
        return 2
    except StageFailure as failure:
        print(
            json.dumps(
                {
                    "problem": arguments.problem,
                    "error": {"kind": failure.kind, "check": failure.check, "message": failure.message},
                }
            )
        )
        return 1
    except MachineFault as fault:  # only `time`: the machine's, so not an `invalid_input` of the problem
        print(
            json.dumps(
                {
                    "problem": arguments.problem,
                    "error": {"kind": "machine", "check": "audit-too-slow", "message": fault.message},
                }
            )
        )
        return 1
    print(json.dumps(result, allow_nan=False))
    return 0
