"""The tolerance a run judges by, chosen by the reference role from the reference's own output.

The parent sends the profile's tolerance (`atol`, `rtol`), under `--precision native` the profile's
tolerance per output dtype too (`dtype_tolerances`: the run's dtypes are the problem's, known only
here), and whether a tolerance the problem declares wins (`declared_tolerance`: true under the
`kernelbench` profile, src/core/tolerance.ts). The dtype that decides is the reference
output's: its first floating-point tensor leaf's (its first tensor leaf's where none is floating).
The choice is reported in `reference-ready` (`tolerance`), audited, and used by every `judge`
request after it (docs/worker-protocol.md, "Reference role").
"""

from dataclasses import dataclass
from typing import Dict, Mapping, Optional

import torch

from ..problem.declared_tolerance import DeclaredTolerance
from ..problem.precision import dtype_name
from ..protocol.outputs import FlatOutput
from ..protocol.request import Tolerance


@dataclass(frozen=True)
class ChosenTolerance:
    atol: float
    rtol: float
    #: `profile` (the parent's) or `problem` (the problem's declaration for `dtype`).
    source: str
    #: The reference output's dtype that decided, or None for an output without tensors.
    dtype: Optional[str]

    def fields(self) -> dict:
        """The `tolerance` entry of `reference-ready`."""
        return {"atol": self.atol, "rtol": self.rtol, "source": self.source, "dtype": self.dtype}


def output_dtype(flat: FlatOutput) -> Optional[str]:
    """The dtype name that decides an output's tolerance (see the module docs), or None."""
    tensors = [leaf for leaf in flat.leaves if isinstance(leaf, torch.Tensor)]
    floating = [leaf for leaf in tensors if leaf.is_floating_point()]
    chosen = floating[0] if floating else (tensors[0] if tensors else None)
    return None if chosen is None else dtype_name(chosen.dtype)


def choose_tolerance(
    flat: FlatOutput,
    requested: Tolerance,
    by_dtype: Mapping[str, Tolerance],
    declared: Mapping[str, DeclaredTolerance],
    use_declared: bool,
) -> ChosenTolerance:
    """The problem's declared tolerance for the output's dtype where `use_declared` and it declares
    one; else the profile's for that dtype (`by_dtype`), else `requested`."""
    dtype = output_dtype(flat)
    if use_declared and dtype in declared:
        entry = declared[dtype]
        return ChosenTolerance(entry.atol, entry.rtol, "problem", dtype)
    profile = by_dtype.get(dtype, requested) if dtype is not None else requested
    return ChosenTolerance(profile.atol, profile.rtol, "profile", dtype)


class ToleranceChoice:
    """The run's tolerance, chosen from the first reference output it is asked about and kept."""

    def __init__(
        self,
        requested: Tolerance,
        by_dtype: Optional[Mapping[str, Tolerance]],
        declared: Dict[str, DeclaredTolerance],
        use_declared: bool,
    ):
        self.requested = requested
        self.by_dtype = dict(by_dtype or {})
        self.declared = declared
        self.use_declared = use_declared
        self.chosen: Optional[ChosenTolerance] = None

    def for_output(self, flat: FlatOutput) -> ChosenTolerance:
        if self.chosen is None:
            self.chosen = choose_tolerance(flat, self.requested, self.by_dtype, self.declared, self.use_declared)
        return self.chosen
