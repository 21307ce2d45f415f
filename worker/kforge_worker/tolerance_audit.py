"""The degenerate-tolerance audit of a problem (HACKS.md #12), as JSON for the `audit` message and
for `python3 -m kforge_worker audit`.

`degenerate.audit_trials` runs over the correctness references (each with its inputs, for the
"input itself" trivial output) under one atol/rtol. `summary` turns its result into JSON values:
per trivial output whether it passes in every trial and its worst errors over the trials
(non-finite errors become null).
"""

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .degenerate import TRIVIAL_OUTPUTS, audit_trials


def _finite(value: Optional[float]) -> Optional[float]:
    return value if value is not None and math.isfinite(value) else None


def _worst(values: List[Optional[float]]) -> Optional[float]:
    present = [value for value in values if value is not None]
    if not present:
        return None
    return _finite(max(present))


def summary(result: Dict[str, Any]) -> Dict[str, Any]:
    """JSON fields of an audit_trials result (see docs/worker-protocol.md, message `audit`)."""
    trivial = {}
    for name in TRIVIAL_OUTPUTS:
        entries = [trial["trivial"][name] for trial in result["trials"]]
        applicable = any(entry["applicable"] for entry in entries)
        trivial[name] = {
            "applicable": applicable,
            "passes": name in result["passing"],
            "max_abs_error": _worst([entry["max_abs_error"] for entry in entries]) if applicable else None,
            "relative_l2_error": _worst([entry["relative_l2_error"] for entry in entries]) if applicable else None,
        }
    return {
        "degenerate": result["degenerate"],
        "passing": list(result["passing"]),
        "exact_trivial": list(result["exact_trivial"]),
        "scale_aware_threshold": result["scale_aware_threshold"],
        "atol": result["atol"],
        "rtol": result["rtol"],
        "trials": len(result["trials"]),
        "trivial": trivial,
    }


class ToleranceAudits:
    """Audits of the correctness references, one per (atol, rtol), computed once each.

    The first is computed with the references' inputs (`with_inputs`); an audit for another
    tolerance, asked for later by a judge request, is computed without them (the "input"
    trivial output is then not applicable)."""

    def __init__(self, references: Sequence[Any], inputs: Optional[Sequence[Any]] = None):
        self.references = list(references)
        self.inputs = list(inputs) if inputs is not None else None
        self.results: Dict[Tuple[float, float], Dict[str, Any]] = {}

    def audit(self, atol: float, rtol: float) -> Optional[Dict[str, Any]]:
        if not self.references:
            return None
        key = (float(atol), float(rtol))
        if key not in self.results:
            inputs = self.inputs if self.inputs is not None and not self.results else [None] * len(self.references)
            self.results[key] = audit_trials(list(zip(self.references, inputs)), atol, rtol)
        return self.results[key]

    def drop_inputs(self) -> None:
        self.inputs = None
