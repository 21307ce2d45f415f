"""The PyTorch operators the reference itself runs, for the candidate's attribution (`in_reference`,
`substituted_ops`; attribution.py).

The reference's forward on the first correctness seed runs once more under the same dispatch trace
the candidate's traced call runs under (dispatch_trace.py), so both name operators the same way
(after composite operators decompose: `F.conv2d` is `aten::convolution` on both sides). Its
operators that are not glue are sent in the `reference-ops` message. A trace that cannot be taken
(no dispatch modes on this torch, the forward raising under it) is reported in `unavailable`,
never a failure of the reference: the parent then marks no operator as the reference's.
"""

from typing import Any, Dict, List

import torch

from ..guard.dispatch_ops import GLUE, glue_operators
from ..guard.dispatch_trace import traced_call
from ..guard.policy import load_policy
from ..problem.inputs import seed_everything


def reference_operators(model: torch.nn.Module, inputs: List[Any], seed: int) -> Dict[str, Any]:
    """The fields of `reference-ops`: `ops` [{op, calls}] and `unavailable` (None, or why)."""
    seed_everything(seed)
    try:
        with torch.no_grad():
            _, recorder = traced_call(lambda: model(*inputs), glue_operators(load_policy()))
    except Exception as error:  # the reference's own failures are reported by its real calls
        return {
            "ops": [],
            "unavailable": f"the reference's forward raised under the trace ({type(error).__name__}: "
            f"{str(error).splitlines()[0] if str(error) else ''})",
        }
    if recorder.unavailable is not None:
        return {"ops": [], "unavailable": recorder.unavailable}
    ops = [{"op": entry.name, "calls": entry.count} for entry in recorder.counts() if entry.kind != GLUE]
    return {"ops": ops, "unavailable": None}
