"""`python3 -m kforge_worker estimate PROBLEM [--preset P] [--precision fp32] [--device-type cpu|cuda]
[--set NAME=VALUE ...] [--capacity BYTES] [--no-timing] [--time [--time-budget-s S]]`: an
evaluation's peak memory before it runs (size_estimate.py), and, when `--capacity` is given and it
does not fit, the problem sizes that would (`fit`: the `--set` values, halving `batch_size` first).
With `--time`, also its time on this host's CPU (`time`, time_estimate.py: the reference's pace
measured by running it at small sizes), and with `--time-budget-s` the largest halving of the batch
constant whose evaluation takes at most that long and fits `--capacity` (`time.fit`).

Prints one JSON object on stdout and exits 0; exits 1 with `{"problem", "error": {kind, check,
message}}` when the problem cannot be loaded or its inputs cannot be made without allocating them;
2 when the command is misused.
"""

import argparse
import json
import sys
from typing import Dict, List, Optional

from ..problem.overrides import Value
from ..problem.precision import PRECISIONS
from ..problem.problem_loader import load_problem
from .size_estimate import measure_shapes, roles, shrink_order, size_constants
from .time_estimate import estimate_time
from ..protocol.errors import StageFailure, describe_exception
from .audit_command import _override

MAX_HALVINGS = 24
NAMES_TRIED = 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        self.print_usage(sys.stderr)
        print(f"kforge_worker estimate: {message}", file=sys.stderr)
        raise SystemExit(2)


def parser() -> argparse.ArgumentParser:
    command = _Parser(
        prog="python3 -m kforge_worker estimate", description="An evaluation's peak memory, before it runs."
    )
    command.add_argument("problem")
    command.add_argument("--preset", default=None)
    command.add_argument("--precision", choices=tuple(PRECISIONS), default="fp32")
    command.add_argument("--device-type", choices=("cpu", "cuda"), default="cpu")
    command.add_argument("--set", dest="overrides", type=_override, action="append", default=[], metavar="NAME=VALUE")
    command.add_argument("--capacity", type=int, default=None, help="bytes the evaluation may use")
    command.add_argument("--no-timing", dest="timing", action="store_false")
    command.add_argument("--time", action="store_true", help="also estimate the evaluation's time on this host's CPU")
    command.add_argument(
        "--time-budget-s",
        type=_positive_seconds,
        default=None,
        help="with --time: the sizes whose evaluation fits this",
    )
    return command


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}") from error
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def estimate(
    path: str, preset: Optional[str], precision: str, device_type: str, overrides: Dict[str, Value], timing: bool
) -> dict:
    problem = load_problem(path, preset, overrides or None)
    try:
        figures = measure_shapes(problem, precision)
    except StageFailure:
        raise
    except Exception as error:
        raise StageFailure(
            "invalid_input",
            "problem-inputs",
            f"the problem's inputs cannot be sized without allocating them: {describe_exception(error)}",
        ) from error
    return {"constants": size_constants(problem), **figures, **roles(figures, precision, device_type, timing)}


def fitting(path: str, arguments, base: dict, capacity: int) -> Optional[dict]:
    """The first sizes (halving one constant at a time, in shrink_order) whose estimate fits."""
    for name in shrink_order(base["constants"])[:NAMES_TRIED]:
        value = base["constants"][name]
        for _ in range(MAX_HALVINGS):
            value //= 2
            if value < 1:
                break
            overrides = {**dict(arguments.overrides), name: value}
            try:
                trial = estimate(
                    path, arguments.preset, arguments.precision, arguments.device_type, overrides, arguments.timing
                )
            except StageFailure:
                break
            if trial["evaluation_bytes"] <= capacity:
                return {"overrides": overrides, "evaluation_bytes": trial["evaluation_bytes"]}
    return None


def _time(arguments, overrides: Dict[str, Value]) -> dict:
    """The `time` field: estimate_time, with sizes that also fit `--capacity` where it is given."""

    def fits_memory(sized: Dict[str, Value]) -> bool:
        if arguments.capacity is None:
            return True
        try:
            trial = estimate(
                arguments.problem, arguments.preset, arguments.precision, arguments.device_type, sized, arguments.timing
            )
        except StageFailure:
            return False
        return trial["evaluation_bytes"] <= arguments.capacity

    return estimate_time(
        arguments.problem, arguments.preset, arguments.precision, overrides, arguments.time_budget_s, fits_memory
    )


def main(argv: List[str]) -> int:
    arguments = parser().parse_args(argv)
    overrides = dict(arguments.overrides)
    try:
        result = estimate(
            arguments.problem, arguments.preset, arguments.precision, arguments.device_type, overrides, arguments.timing
        )
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
    fits = None if arguments.capacity is None else result["evaluation_bytes"] <= arguments.capacity
    fit = fitting(arguments.problem, arguments, result, arguments.capacity) if fits is False else None
    timed = _time(arguments, overrides) if arguments.time else None
    print(
        json.dumps(
            {
                "problem": arguments.problem,
                "preset": arguments.preset,
                "precision": arguments.precision,
                "device_type": arguments.device_type,
                "problem_overrides": overrides or None,
                **result,
                "capacity_bytes": arguments.capacity,
                "fits": fits,
                "fit": fit,
                **({} if timed is None else {"time": timed}),
            }
        )
    )
    return 0
