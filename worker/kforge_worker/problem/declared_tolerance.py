"""A problem's own tolerance per dtype (docs/spec.md section 4, "Declared tolerance").

A single-file problem declares it as a module constant beside `KFORGE_PRESETS`:

    KFORGE_TOLERANCE = {"bfloat16": {"atol": 2e-2, "rtol": 2e-2}, "float8_e4m3fn": 0.1}

A KernelBench-Hard problem folder declares the same mapping as `tolerance` in its `problem.yaml`;
`parse_tolerances` takes either (the folder's loader hands it the parsed YAML mapping). Keys name a
dtype, in any of the spellings those files use: torch's name with or without `torch.`
(`bfloat16`, `torch.float32`, `float8_e4m3fn`) or the short ones (`bf16`, `fp16`, `fp32`, `fp64`,
`fp8_e4m3`, `fp8_e4m3fn`, `fp8_e5m2`), in any case. A value is a number, meaning atol = rtol = it,
or `{"atol": A, "rtol": R}`; both must be finite and non-negative. A string that reads as a
number counts as one (PyYAML reads `5e-2`, without a dot, as a string).

Anything else is `invalid_input` with check `problem-load`, naming the key and what to write.
"""

import math
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional

from ..protocol.errors import StageFailure

#: The module constant a single-file problem declares its tolerance in.
CONSTANT = "KFORGE_TOLERANCE"

#: Every spelling accepted, lower case and without `torch.`, and the dtype name it stands for.
DTYPE_SPELLINGS: Dict[str, str] = {
    "float64": "float64",
    "double": "float64",
    "fp64": "float64",
    "float32": "float32",
    "float": "float32",
    "fp32": "float32",
    "float16": "float16",
    "half": "float16",
    "fp16": "float16",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float8_e4m3fn": "float8_e4m3fn",
    "fp8_e4m3fn": "float8_e4m3fn",
    "fp8_e4m3": "float8_e4m3fn",
    "e4m3": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2",
    "fp8_e5m2": "float8_e5m2",
    "e5m2": "float8_e5m2",
    "int64": "int64",
    "long": "int64",
    "int32": "int32",
    "int": "int32",
    "int16": "int16",
    "int8": "int8",
    "uint8": "uint8",
}


@dataclass(frozen=True)
class DeclaredTolerance:
    """One dtype's declared tolerance, and the key the problem wrote it under."""

    atol: float
    rtol: float
    key: str


class DeclaredToleranceError(ValueError):
    """A tolerance mapping that cannot be used; the message names the key and what to write."""


def dtype_of_key(key: Any) -> str:
    """The dtype name a tolerance key stands for (`bf16` -> `bfloat16`), or DeclaredToleranceError."""
    if not isinstance(key, str):
        raise DeclaredToleranceError(f"the key {key!r} is not a dtype name; write e.g. 'bfloat16' or 'fp16'")
    spelled = key.strip().lower()
    spelled = spelled[len("torch.") :] if spelled.startswith("torch.") else spelled
    if spelled not in DTYPE_SPELLINGS:
        raise DeclaredToleranceError(
            f"the key {key!r} names no dtype kforge knows; use one of "
            f"{', '.join(sorted(set(DTYPE_SPELLINGS.values())))} (or bf16, fp16, fp32, fp64, fp8_e4m3, fp8_e5m2)"
        )
    return DTYPE_SPELLINGS[spelled]


def _number(value: Any, what: str) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise DeclaredToleranceError(f"{what} is {value!r}, not a number") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DeclaredToleranceError(f"{what} is {value!r}, not a number")
    if not math.isfinite(value) or value < 0:
        raise DeclaredToleranceError(f"{what} is {value!r}; it must be a finite number, 0 or more")
    return float(value)


def _entry(key: str, value: Any) -> DeclaredTolerance:
    if isinstance(value, Mapping):
        unknown = sorted(str(name) for name in value if name not in ("atol", "rtol"))
        if unknown or "atol" not in value or "rtol" not in value:
            raise DeclaredToleranceError(
                f"the entry for {key!r} is {dict(value)!r}; give both 'atol' and 'rtol' and nothing else, "
                f"or one number for both"
            )
        return DeclaredTolerance(
            _number(value["atol"], f"the atol of {key!r}"), _number(value["rtol"], f"the rtol of {key!r}"), key
        )
    number = _number(value, f"the tolerance of {key!r}")
    return DeclaredTolerance(number, number, key)


def parse_tolerances(mapping: Any) -> Dict[str, DeclaredTolerance]:
    """A per-dtype tolerance mapping (the module constant's or problem.yaml's `tolerance`), keyed by
    dtype name (`bfloat16`, `float8_e4m3fn`, ...); DeclaredToleranceError where it cannot be used."""
    if not isinstance(mapping, Mapping):
        raise DeclaredToleranceError(
            f"it is a {type(mapping).__name__}; write a dict from dtype to tolerance, "
            f"e.g. {{'bfloat16': 0.02, 'float32': {{'atol': 1e-5, 'rtol': 1e-5}}}}"
        )
    parsed: Dict[str, DeclaredTolerance] = {}
    for key, value in mapping.items():
        dtype = dtype_of_key(key)
        entry = _entry(key, value)
        earlier = parsed.get(dtype)
        if earlier is not None and (earlier.atol, earlier.rtol) != (entry.atol, entry.rtol):
            raise DeclaredToleranceError(
                f"the keys {earlier.key!r} and {key!r} both name {dtype}, with different tolerances; keep one"
            )
        parsed[dtype] = entry
    return parsed


def declared_tolerances(module) -> Dict[str, DeclaredTolerance]:
    """The problem module's `KFORGE_TOLERANCE`, else its folder's problem.yaml `tolerance`, parsed
    (empty without either); a StageFailure (invalid_input, problem-load) where it cannot be used."""
    mapping: Optional[Any] = module.__dict__.get(CONSTANT)
    if mapping is None:
        folder = module.__dict__.get("__kforge_folder__")
        mapping = getattr(folder, "tolerance", None)
    if mapping is None:
        return {}
    try:
        return parse_tolerances(mapping)
    except DeclaredToleranceError as error:
        raise StageFailure(
            "invalid_input", "problem-load", f"the problem's {CONSTANT} cannot be used: {error}"
        ) from None
