"""`own-kernel` (docs/hacks.md #6, #7): did the candidate's own kernel run in the traced call?

`judge(kernels, own, policy, where)` reads the GPU kernels the profiler saw during the first
correctness trial (kernel_trace.py; name → launches) and the kernels the candidate built
(kernel_names.OwnKernels) and returns a torch_fallback.Finding:

- `passed` when at least one launched kernel is the candidate's own (kernel_names.py says how
  names are matched); the message names the own kernels with their launch counts and lists the
  others (vendor libraries, PyTorch's glue kernels), which are allowed beside an own kernel;
- otherwise `reject` under every policy whose `own_work` is `"reject"` (policy.requires_own_work:
  every shipped policy but `pytorch`), `note` under `pytorch` (`own_work: "note"`) or with
  `severity: {"own-kernel": "note"}`. This
  covers a candidate that built no kernel at all, and one whose only kernels are a vendor
  library's: they are the kernels PyTorch's own operators launch too.

`skipped(reason, where)` is the finding where the profiler could not list kernels or the
candidate's kernels could not be listed; those never reject.
"""

from typing import Any, Mapping, Optional, Sequence, Tuple

from .kernel_names import OwnKernels, display_name
from .policy import requires_own_work
from .policy_rejection import own_work_waived
from .torch_fallback import Finding

CHECK = "own-kernel"
#: Kernels named in a message before "and N more".
NAMED_KERNELS = 6


def severity(policy: Mapping[str, Any], check: str = CHECK) -> str:
    """`reject` or `note` when no kernel of the candidate's own ran (or a fallback ran instead):
    reject under every policy whose `own_work` is `"reject"`, unless its `severity` override for
    `check` says note."""
    if not requires_own_work(policy):
        return "note"
    return policy.get("severity", {}).get(check, "reject")


def listing(counts: Sequence[Tuple[str, int]], limit: int = NAMED_KERNELS) -> str:
    """`kforge_relu_kernel<…> ×1, at::native::vectorized_elementwise_kernel<…> ×2` (display names,
    "and N more" past `limit`)."""
    merged: dict = {}
    for name, count in counts:
        shown = display_name(name)
        merged[shown] = merged.get(shown, 0) + count
    named = [f"{name} ×{count}" for name, count in list(merged.items())[:limit]]
    if len(merged) > limit:
        named.append(f"and {len(merged) - limit} more")
    return ", ".join(named)


def skipped(reason: str, where: str) -> Finding:
    return Finding("skipped", f"{where}: whether the candidate's own kernel ran was not checked: {reason}")


def judge(
    kernels: Mapping[str, int], own: OwnKernels, policy: Mapping[str, Any], where: str, copies: int = 0
) -> Finding:
    """The finding for one profiled call (see the module docs); `copies`: device copies and fills."""
    ran = sorted(kernels.items(), key=lambda item: -item[1])
    mine = [(name, count) for name, count in ran if own.owns(name)]
    others = [(name, count) for name, count in ran if not own.owns(name)]
    if mine:
        message = f"{where}: its own kernel(s) ran: {listing(mine)}"
        if others:
            message += f"; beside them: {listing(others)}"
        return Finding("passed", message)
    built = own.names()
    if others:
        what = f"only {listing(others)} ran"
    else:
        what = "no GPU kernel ran at all" + (f" ({copies} device copies or fills)" if copies else "")
    if not built:
        builds = (
            "it built no kernel kforge recognises (CUDA extensions through load_inline/load, Triton "
            "JIT functions), and forward must launch one"
        )
    else:
        shown = ", ".join(built[:NAMED_KERNELS]) + (
            f" and {len(built) - NAMED_KERNELS} more" if len(built) > NAMED_KERNELS else ""
        )
        builds = f"it builds {shown}, and forward must launch {'it' if len(built) == 1 else 'one of them'}"
    level = severity(policy)
    message = f"{where}: launched no kernel of the candidate's own: {what}; {builds}"
    if level == "note":
        message += f" (recorded only: the policy `{policy.get('name', '?')}` does not reject it)"
    else:
        message += f" ({own_work_waived()})"
    return Finding(level, message, [kernel for kernel, _ in others])


def verdict(
    kernels: Optional[Mapping[str, int]],
    unavailable: Optional[str],
    own: OwnKernels,
    own_unknown: Optional[str],
    policy: Mapping[str, Any],
    where: str,
    copies: int = 0,
) -> Finding:
    """`judge`, or `skipped` where the profiler saw no kernels (`unavailable`) or the candidate's
    kernels could not be listed (`own_unknown`) and none of the launched ones is known to be its own."""
    if kernels is None:
        return skipped(unavailable or "the profiler did not run", where)
    finding = judge(kernels, own, policy, where, copies)
    if finding.status != "passed" and own_unknown is not None:
        return skipped(f"{own_unknown}; kernels that ran: {listing(sorted(kernels.items())) or 'none'}", where)
    return finding
