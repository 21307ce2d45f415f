"""The `roofline` message of the reference role (docs/hacks.md #16): bytes and FLOPs of one reference run.

Measured on the first correctness seed's model and inputs with `roofline.measure_reference`; when
the request carries `ceilings`, the worker also computes `lower_bound_ms`. A problem whose FLOPs
cannot be counted still reports its bytes; a measurement that raises reports `error`.
"""

from typing import Any, Dict, Optional

from ..protocol.errors import describe_exception
from ..protocol.request import Ceilings
from .roofline import lower_bound_ms, measure_reference


def roofline_fields(
    model, inputs, seed: int, ceilings: Optional[Ceilings], declared: Optional[Dict[str, Optional[float]]] = None
) -> Dict[str, Any]:
    """The fields of the `roofline` message (without `v` and `type`). `declared`: the FLOPs and
    bytes the problem states for these sizes (a folder's problem.yaml formulas), which replace the
    measured ones where given (`flop_method`/`bytes_method` say so)."""
    fields: Dict[str, Any] = {
        "seed": seed,
        "bytes": None,
        "flops": None,
        "flop_method": None,
        "input_bytes": None,
        "state_bytes": None,
        "output_bytes": None,
        "bytes_method": None,
        "lower_bound_ms": None,
        "error": None,
    }
    try:
        measured = measure_reference(model, inputs)
    except Exception as error:
        fields["error"] = describe_exception(error)
        return fields
    fields.update(
        bytes=measured["bytes_moved"],
        flops=measured["flops"],
        flop_method=measured["flop_method"],
        input_bytes=measured["input_bytes"],
        state_bytes=measured["state_bytes"],
        output_bytes=measured["output_bytes"],
        bytes_method="tensor sizes",
    )
    for key, method in (("flops", "flop_method"), ("bytes", "bytes_method")):
        if declared and declared.get(key) is not None:
            fields[key] = declared[key]
            fields[method] = f"problem.yaml {key}_formula"
    if ceilings is not None:
        try:
            fields["lower_bound_ms"] = lower_bound_ms(
                fields["bytes"], fields["flops"], ceilings.bandwidth_bytes_per_s, ceilings.peak_flops_per_s
            )
        except ValueError as error:
            fields["error"] = str(error)
    return fields
