"""Seeds, inputs and models built the same way in both roles.

Inputs: seed everything with the trial's seed, call `get_inputs()`, then move and cast. On a cuda
device (torch 2.x), `get_inputs()` runs with that device as torch's default device, so its
`torch.randn(...)` draws on the GPU: 1 GiB of inputs in about a millisecond instead of 1.8 s on
an H200 host (the values differ from a host draw, identically in both roles). A `get_inputs()`
that fails that way (it calls `.numpy()`, say) is drawn on the host instead, reseeded, in both
roles alike. Models: seed again with the same seed, call `get_init_inputs()` and construct,
so the reference's and the candidate's weights are identical.

Parameters: a candidate model whose `state_dict` has the same names and shapes as the problem's
`Model` is then given the reference's own values with `load_state_dict(strict=True)`, as
KernelBench-Hard's harness does, so a kernel that creates its weights in another order, or leaves
them uninitialised for the harness to load, is judged on the reference's weights. Where the names
or shapes differ, KernelBench's rule stands alone: both were built from the same seed.
`align_parameters` says which rule applied (the guard report's `parameters` note).
"""

import random
from typing import Any, List, Optional, Tuple

import torch

from ..device.device import synchronize
from ..protocol.errors import StageFailure, failures_as
from .precision import cast_model, cast_value
from .stress import stress_inputs


def seed_everything(seed: int) -> None:
    """Seeds torch (CPU and every CUDA device), `random` and, where installed, numpy."""
    torch.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy
    except ImportError:
        return
    numpy.random.seed(seed)


#: torch.device works as a default-device context manager from torch 2.0.
DEVICE_DEFAULT_CONTEXT = hasattr(torch.device, "__enter__")


def _drawn_on(problem, seed: int, device: torch.device) -> Optional[Any]:
    """`get_inputs()` with `device` as the default device, or None where that cannot be done."""
    if device.type != "cuda" or not DEVICE_DEFAULT_CONTEXT:
        return None
    try:
        with device:
            return problem.get_inputs()
    except Exception:
        seed_everything(seed)
        return None


def make_inputs(problem, seed: int, device: Optional[torch.device] = None) -> List[Any]:
    """The problem's forward arguments for `seed`, as `get_inputs()` builds them (not yet cast),
    drawn on `device` where it is a cuda device (see the module docs)."""
    seed_everything(seed)
    values = _drawn_on(problem, seed, device) if device is not None else None
    if values is None:
        with failures_as("invalid_input", "problem-inputs", "the problem's get_inputs() raised"):
            values = problem.get_inputs()
    if not isinstance(values, (list, tuple)):
        raise StageFailure(
            "invalid_input", "problem-inputs", f"get_inputs() returned a {type(values).__name__}, expected a list"
        )
    return list(values)


def make_model(
    problem,
    model_class,
    seed: int,
    device: torch.device,
    dtype: Optional[torch.dtype],
    *,
    kind: str,
    check: str,
    context: str,
) -> torch.nn.Module:
    """Seeds, constructs `model_class(*get_init_inputs())`, moves and casts it.

    A raising constructor is a StageFailure of (kind, check), with `context` as the message's start.
    """
    seed_everything(seed)
    with failures_as("invalid_input", "problem-inputs", "the problem's get_init_inputs() raised"):
        init_inputs = problem.get_init_inputs()
    if not isinstance(init_inputs, (list, tuple)):
        raise StageFailure(
            "invalid_input",
            "problem-inputs",
            f"get_init_inputs() returned a {type(init_inputs).__name__}, expected a list",
        )
    with failures_as(kind, check, context):
        model = cast_model(model_class(*init_inputs), device, dtype)
    reference_class = getattr(problem, "Model", None)
    if isinstance(reference_class, type) and model_class is not reference_class:
        seed_everything(seed)
        with failures_as("invalid_input", "problem-inputs", "the problem's Model(*get_init_inputs()) raised"):
            reference = cast_model(reference_class(*problem.get_init_inputs()), torch.device("cpu"), dtype)
        with failures_as(kind, check, f"{context} (loading the reference's state_dict)"):
            ALIGNMENTS.append(align_parameters(model, reference))
    return model


#: What align_parameters said for each candidate model made in this process, latest last.
ALIGNMENTS: List[str] = []


def _differences(ours: dict, theirs: dict) -> str:
    missing = sorted(set(theirs) - set(ours))
    extra = sorted(set(ours) - set(theirs))
    shaped = sorted(k for k in set(ours) & set(theirs) if tuple(ours[k].shape) != tuple(theirs[k].shape))
    parts = [
        f"{label} {', '.join(names[:3])}{'…' if len(names) > 3 else ''}"
        for label, names in (("lacks", missing), ("adds", extra), ("reshapes", shaped))
        if names
    ]
    return "; ".join(parts)


def align_parameters(model: torch.nn.Module, reference: torch.nn.Module) -> str:
    """Loads `reference`'s state_dict into `model` where both have the same names and shapes (see
    the module docs); returns which rule applied, in words for the guard report."""
    theirs = reference.state_dict()
    if not theirs:
        return "the problem's Model has no parameters or buffers"
    ours = model.state_dict()
    differences = _differences(ours, theirs)
    if differences:
        return (
            f"same seed: ModelNew's state_dict differs from Model's ({differences}), so both were built from "
            "the same seed (KernelBench's rule) and nothing was loaded"
        )
    with torch.no_grad():
        model.load_state_dict(theirs, strict=True)
    return (
        f"loaded from Model's state_dict: its {len(theirs)} entries match ModelNew's by name and shape "
        "(load_state_dict(strict=True), as KernelBench-Hard's harness does)"
    )


def cast_inputs(values: List[Any], device: torch.device, dtype: Optional[torch.dtype]) -> List[Any]:
    """Independent copies of the inputs on `device`, floating ones cast to `dtype`."""
    return [cast_value(value, device, dtype) for value in values]


def make_trial(
    problem,
    model_class,
    seed: int,
    device: torch.device,
    dtype: Optional[torch.dtype],
    *,
    kind: str,
    check: str,
    context: str,
    stressed: bool = False,
) -> Tuple[torch.nn.Module, List[Any]]:
    """A model and its inputs for `seed`, built the same way in both roles: inputs first, scaled
    and shifted before the cast when `stressed` (stress.py)."""
    inputs = make_inputs(problem, seed, device)
    inputs = cast_inputs(stress_inputs(inputs) if stressed else inputs, device, dtype)
    model = make_model(problem, model_class, seed, device, dtype, kind=kind, check=check, context=context)
    return model, inputs


def call_model(model: torch.nn.Module, inputs: List[Any], seed: int, device: torch.device) -> Any:
    """One untimed forward: reseeded (random ops in forward agree across roles), without autograd,
    followed by a device-wide synchronize so that device errors surface here."""
    seed_everything(seed)
    with torch.no_grad():
        output = model(*inputs)
    synchronize(device)
    return output
