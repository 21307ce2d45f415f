"""The degenerate-tolerance audit of a problem (docs/hacks.md #12), as JSON for the `audit` message and
for `python3 -m kforge_worker audit`.

`degenerate.audit` runs over each correctness reference (with its inputs, for the "input itself"
trivial output) under one atol/rtol, one trial at a time, and `degenerate.combine_audits` joins
them. `summary` turns its result into JSON values: per trivial output whether it passes in every
trial and its worst errors over the trials (non-finite errors become null).
"""

import math
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from .degenerate import TRIVIAL_OUTPUTS, audit, combine_audits


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

    The reference request's tolerance is audited trial by trial while each reference's inputs still
    exist (`add_trial`, then `finish`), for the "input itself" trivial output. An audit for another
    tolerance, asked for later by a judge request, goes over `references()` again (the reference
    store computes what it did not keep, one trial at a time) without the inputs (the "input"
    trivial output is then not applicable)."""

    def __init__(self, references: Callable[[], Iterable[Any]]):
        self.references = references
        self.results: Dict[Tuple[float, float], Dict[str, Any]] = {}
        self.pending: List[dict] = []

    def add_trial(self, reference_leaves: Any, inputs: Any, atol: float, rtol: float) -> None:
        self.pending.append(audit(reference_leaves, atol, rtol, inputs))

    def finish(self, atol: float, rtol: float) -> Optional[Dict[str, Any]]:
        """The audit of the trials added, kept as this tolerance's result (None without trials)."""
        if not self.pending:
            return None
        self.results[(float(atol), float(rtol))] = combine_audits(self.pending, atol, rtol)
        self.pending = []
        return self.results[(float(atol), float(rtol))]

    def audit(self, atol: float, rtol: float) -> Optional[Dict[str, Any]]:
        key = (float(atol), float(rtol))
        if key not in self.results:
            audits = [audit(leaves, atol, rtol, None) for leaves in self.references()]
            if not audits:
                return None
            self.results[key] = combine_audits(audits, atol, rtol)
        return self.results[key]
