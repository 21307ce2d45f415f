"""The run-time half of `torch-fallback` (docs/hacks.md #6, #7): did PyTorch do the work of the traced call?

`judge(operators, policy, output_elements)` reads the operators one untimed correctness call
dispatched (dispatch_trace.py) and returns a :class:`Finding`:

- compute operators of PyTorch (dispatch_ops.py: anything that is not shape, view, copy or
  allocation glue under the policy) make it `reject` under a policy that rejects PyTorch compute
  (policy.rejects_pytorch_compute: `own-kernels`, `strict`), or `note` where the policy allows it
  and reports it (`kernelbench`, `permissive`, `pytorch`: `forward_torch: any`, `aten_compute_in_native:
  true` — the trace cannot tell Python from C++ callers — `enforce: false`, or a `severity`
  override for `torch-fallback`);
- **bookkeeping**: a compute operator none of whose calls touched a tensor of more than
  SMALL_OP_ELEMENTS elements (arguments and results) is scalar bookkeeping, as long as the results
  of all such calls add up to at most max(SMALL_OP_ELEMENTS, output elements // SMALL_OP_SHARE);
  past that budget they count as compute like any other (the answer assembled from many tiny ops);
- otherwise `passed`; the candidate's own custom operators (other namespaces) are listed.
"""

from dataclasses import dataclass, field
from typing import Any, List, Mapping, Sequence

from .dispatch_ops import COMPUTE, GLUE, OWN
from .policy import rejects_pytorch_compute

#: A compute operator whose tensors never exceed this many elements may be bookkeeping.
SMALL_OP_ELEMENTS = 64
#: Bookkeeping results may add up to the output's element count divided by this (at least SMALL_OP_ELEMENTS).
SMALL_OP_SHARE = 16
#: Operators named in a message before "and N more".
NAMED_OPERATORS = 8


@dataclass
class Finding:
    status: str  # "reject" | "note" | "passed" (| "skipped" for own_kernel.py)
    message: str
    compute: List[str] = field(default_factory=list)


def severity(policy: Mapping[str, Any], check: str = "torch-fallback") -> str:
    """`reject` or `note` for PyTorch compute that ran, under the policy; `check` names the
    `severity` override read."""
    if not rejects_pytorch_compute(policy):
        return "note"
    return policy.get("severity", {}).get(check, "reject")


def listing(entries: Sequence[Any], limit: int = NAMED_OPERATORS) -> str:
    """`aten::mm ×1, aten::add.Tensor ×1` (and "and N more" past `limit`)."""
    named = [f"{entry.name} ×{entry.count}" for entry in entries[:limit]]
    if len(entries) > limit:
        named.append(f"and {len(entries) - limit} more")
    return ", ".join(named) if named else "nothing"


def bookkeeping_budget(output_elements: int) -> int:
    return max(SMALL_OP_ELEMENTS, output_elements // SMALL_OP_SHARE)


def bookkeeping(operators: Sequence[Any], output_elements: int) -> List[Any]:
    """The compute operators taken as scalar bookkeeping (see the module docs): none of their calls
    touched a tensor of more than SMALL_OP_ELEMENTS elements, and their results add up to at most
    the budget (past it, none is bookkeeping)."""
    small = [entry for entry in operators if entry.kind == COMPUTE and entry.largest <= SMALL_OP_ELEMENTS]
    return small if sum(entry.result_elements for entry in small) <= bookkeeping_budget(output_elements) else []


def work(operators: Sequence[Any], output_elements: int) -> List[Any]:
    """The compute operators beyond bookkeeping: what `judge` calls PyTorch doing the work."""
    small = bookkeeping(operators, output_elements)
    return [entry for entry in operators if entry.kind == COMPUTE and entry not in small]


def judge(operators: Sequence[Any], policy: Mapping[str, Any], output_elements: int, where: str) -> Finding:
    """The finding for one traced call; `operators` as DispatchRecorder.counts() returns them."""
    working = work(operators, output_elements)
    own = [entry for entry in operators if entry.kind == OWN]
    glue = [entry for entry in operators if entry.kind == GLUE]
    name = policy.get("name", "?")
    if working:
        level = severity(policy)
        message = (
            f"{where}: forward dispatched {listing(working)} to PyTorch while it ran: the policy `{name}` "
            f"allows only shape, view and allocation glue; move the work into the kernel"
        )
        if level == "note":
            message = (
                f"{where}: forward dispatched {listing(working)} to PyTorch while it ran (allowed and "
                f"reported: the policy `{name}` does not reject PyTorch compute)"
            )
        return Finding(level, message, [entry.name for entry in working])
    parts = [f"{where}: forward dispatched only glue to PyTorch ({listing(glue)})"]
    small = bookkeeping(operators, output_elements)
    if small:
        used = sum(entry.result_elements for entry in small)
        parts.append(
            f"small compute taken as bookkeeping ({listing(small)}: no tensor above "
            f"{SMALL_OP_ELEMENTS} elements, results {used} of the {bookkeeping_budget(output_elements)} "
            f"elements allowed)"
        )
    if own:
        parts.append(f"its own operator(s) {listing(own)} (what their kernels call is not traced)")
    return Finding("passed", "; ".join(parts))
