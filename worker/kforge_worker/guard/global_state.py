"""Snapshots of torch's global state, to catch a candidate that changes it (docs/hacks.md #11, #15, #17).

A snapshot maps a flag's name to its value; flags this torch does not have are left out. Each flag
belongs to one check: `precision` for switches that lower the arithmetic precision (TF32, reduced
precision reductions and fp16 accumulation, the `fp32_precision` switches of torch 2.9, the float32
matmul precision, autocast), `global-state` for everything else (thread counts, cuDNN/oneDNN
switches, determinism and its debug mode, the default dtype and device, grad mode, anomaly
detection, warn-always, the CUDA sync debug mode, denormals flushed to zero, the device's
persisting-L2 limit). `changes(before, after)` lists what differs.

The static guard leaves every call and `torch.backends` assignment whose effect a flag here reads
to this snapshot (a note there; `static/names.py`, `_RUNTIME_STATE_CALLS` and
`_RUNTIME_STATE_FLAGS`, which a test keeps in step with `FLAGS`).
"""

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

PRECISION = "precision"
GLOBAL_STATE = "global-state"
PERSISTING_L2 = "cuda.persisting_l2_limit_bytes"


def _attribute(owner: Callable[[], Any], name: str) -> Callable[[], Any]:
    return lambda: getattr(owner(), name)


def _call(function_name: str) -> Callable[[], Any]:
    return lambda: getattr(torch, function_name)()


def _sync_debug_mode() -> int:
    """Read only where CUDA is already initialised (reading it would initialise CUDA in a cpu run)."""
    if not torch.cuda.is_initialized():
        raise RuntimeError("CUDA is not initialised")
    return torch.cuda.get_sync_debug_mode()


def _flushes_denormals() -> bool:
    """Whether a float32 denormal reads as zero after a multiplication on this thread: the state
    `torch.set_flush_denormal(True)` sets (FTZ/DAZ), which torch has no getter for."""
    with torch.no_grad():
        return float((torch.full((1,), 1e-40, dtype=torch.float32) * 1.0)[0]) == 0.0


#: (flag name, check, reader). A reader that raises means the flag does not exist here.
FLAGS: Tuple[Tuple[str, str, Callable[[], Any]], ...] = (
    ("torch.backends.cuda.matmul.allow_tf32", PRECISION, _attribute(lambda: torch.backends.cuda.matmul, "allow_tf32")),
    (
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
        PRECISION,
        _attribute(lambda: torch.backends.cuda.matmul, "allow_fp16_reduced_precision_reduction"),
    ),
    (
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
        PRECISION,
        _attribute(lambda: torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction"),
    ),
    (
        "torch.backends.cuda.matmul.allow_fp16_accumulation",
        PRECISION,
        _attribute(lambda: torch.backends.cuda.matmul, "allow_fp16_accumulation"),
    ),
    ("torch.backends.cudnn.allow_tf32", PRECISION, _attribute(lambda: torch.backends.cudnn, "allow_tf32")),
    # torch 2.9's precision switches (absent, so not compared, on older torch)
    ("torch.backends.fp32_precision", PRECISION, _attribute(lambda: torch.backends, "fp32_precision")),
    (
        "torch.backends.cuda.matmul.fp32_precision",
        PRECISION,
        _attribute(lambda: torch.backends.cuda.matmul, "fp32_precision"),
    ),
    ("torch.backends.cudnn.fp32_precision", PRECISION, _attribute(lambda: torch.backends.cudnn, "fp32_precision")),
    (
        "torch.backends.cudnn.conv.fp32_precision",
        PRECISION,
        _attribute(lambda: torch.backends.cudnn.conv, "fp32_precision"),
    ),
    (
        "torch.backends.cudnn.rnn.fp32_precision",
        PRECISION,
        _attribute(lambda: torch.backends.cudnn.rnn, "fp32_precision"),
    ),
    ("torch.backends.mkldnn.fp32_precision", PRECISION, _attribute(lambda: torch.backends.mkldnn, "fp32_precision")),
    (
        "torch.backends.mkldnn.matmul.fp32_precision",
        PRECISION,
        _attribute(lambda: torch.backends.mkldnn.matmul, "fp32_precision"),
    ),
    (
        "torch.backends.mkldnn.conv.fp32_precision",
        PRECISION,
        _attribute(lambda: torch.backends.mkldnn.conv, "fp32_precision"),
    ),
    (
        "torch.backends.mkldnn.rnn.fp32_precision",
        PRECISION,
        _attribute(lambda: torch.backends.mkldnn.rnn, "fp32_precision"),
    ),
    ("torch.get_float32_matmul_precision()", PRECISION, _call("get_float32_matmul_precision")),
    ("torch.is_autocast_enabled()", PRECISION, _call("is_autocast_enabled")),
    ("torch.is_autocast_cpu_enabled()", PRECISION, _call("is_autocast_cpu_enabled")),
    ("torch.backends.cudnn.enabled", GLOBAL_STATE, _attribute(lambda: torch.backends.cudnn, "enabled")),
    ("torch.backends.cudnn.benchmark", GLOBAL_STATE, _attribute(lambda: torch.backends.cudnn, "benchmark")),
    ("torch.backends.cudnn.deterministic", GLOBAL_STATE, _attribute(lambda: torch.backends.cudnn, "deterministic")),
    ("torch.backends.mkldnn.enabled", GLOBAL_STATE, _attribute(lambda: torch.backends.mkldnn, "enabled")),
    ("torch.are_deterministic_algorithms_enabled()", GLOBAL_STATE, _call("are_deterministic_algorithms_enabled")),
    ("torch.get_num_threads()", GLOBAL_STATE, _call("get_num_threads")),
    ("torch.get_num_interop_threads()", GLOBAL_STATE, _call("get_num_interop_threads")),
    ("torch.get_default_dtype()", GLOBAL_STATE, lambda: str(torch.get_default_dtype())),
    ("torch.is_grad_enabled()", GLOBAL_STATE, _call("is_grad_enabled")),
    ("torch.get_deterministic_debug_mode()", GLOBAL_STATE, _call("get_deterministic_debug_mode")),
    ("torch.is_anomaly_enabled()", GLOBAL_STATE, _call("is_anomaly_enabled")),
    ("torch.is_warn_always_enabled()", GLOBAL_STATE, _call("is_warn_always_enabled")),
    ("torch.cuda.get_sync_debug_mode()", GLOBAL_STATE, lambda: _sync_debug_mode()),
    ("the default device", GLOBAL_STATE, lambda: str(torch.empty(0).device)),
    ("denormals flushed to zero", GLOBAL_STATE, lambda: _flushes_denormals()),
)

CHECK_OF = {name: check for name, check, _ in FLAGS}
CHECK_OF[PERSISTING_L2] = GLOBAL_STATE


@dataclass(frozen=True)
class StateChange:
    flag: str
    check: str
    before: Any
    after: Any

    def describe(self) -> str:
        return f"{self.flag} changed from {self.before!r} to {self.after!r}"


def snapshot(persisting_l2_limit: Optional[Callable[[], Optional[int]]] = None) -> Dict[str, Any]:
    """The current value of every flag this torch has (and the persisting-L2 limit when a reader
    is given and returns a value)."""
    values: Dict[str, Any] = {}
    for name, _, read in FLAGS:
        try:
            values[name] = read()
        except Exception:  # the flag does not exist in this torch
            continue
    if persisting_l2_limit is not None:
        limit = persisting_l2_limit()
        if limit is not None:
            values[PERSISTING_L2] = limit
    return values


def changes(before: Dict[str, Any], after: Dict[str, Any]) -> List[StateChange]:
    """Flags present in `before` whose value differs in `after` (a flag that vanished counts)."""
    found = []
    for name, value in before.items():
        current = after.get(name, "<unreadable>")
        if current != value:
            found.append(StateChange(name, CHECK_OF.get(name, GLOBAL_STATE), value, current))
    return found


def first_check(found: List[StateChange]) -> str:
    """`precision` when any precision switch changed, `global-state` otherwise."""
    return PRECISION if any(change.check == PRECISION for change in found) else GLOBAL_STATE
