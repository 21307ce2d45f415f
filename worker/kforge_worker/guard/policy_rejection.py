"""Rejections the guard policy decides from what ran in the traced call (`torch-fallback`,
`own-kernel`, `silent-fallback`: docs/guard.md, "What ran"), and the policy that would measure the
candidate instead.

Such a rejection says nothing about whether the answer is right, so it does not end the traced call
before its output is judged: the correctness stage hands the output to the judge first
(correctness_stage.py), and the parent reports a wrong output as `incorrect` before the policy's
`rejected` (docs/worker-protocol.md, "Verdicts from the guard"). Every other rejection (a hidden
trace, a stale output, tampering) still ends the call at once.

Each message ends by naming the shipped policy that would measure the candidate as it is, in the
words of `measured_under` — the parent reads the name back from them (src/core/measuring-policy.ts)
to say which `--guard-policy` would.
"""

from typing import Any, Optional

from ..protocol.errors import StageFailure

#: The policy that measures a PyTorch program: no kernel of the candidate's own required (policy.py).
OWN_WORK_WAIVED = "pytorch"
#: The policy that allows PyTorch operators beside the candidate's own kernels (policy.py).
PYTORCH_BESIDE_KERNELS = "kernelbench"


class PolicyRejection(StageFailure):
    """A `rejected` failure of a policy check; `output` is the traced call's output once the call
    returned (CandidateCalls.call sets it), so that it can be judged before the rejection is sent."""

    def __init__(self, check: str, message: str):
        super().__init__("rejected", check, message)
        self.output: Optional[Any] = None


def measured_under(policy: str, what: str) -> str:
    """The clause naming the policy that would measure the candidate as it is:
    "the guard policy `pytorch` would measure it as a PyTorch program"."""
    return f"the guard policy `{policy}` would measure it {what}"


def own_work_waived() -> str:
    """The clause for an own-work rejection (no kernel of the candidate's own did the work)."""
    return measured_under(OWN_WORK_WAIVED, "as a PyTorch program, no kernel of its own required")


def pytorch_allowed() -> str:
    """The clause for PyTorch compute beside a kernel of the candidate's own."""
    return measured_under(PYTORCH_BESIDE_KERNELS, "with PyTorch operators beside its kernels reported, not rejected")
