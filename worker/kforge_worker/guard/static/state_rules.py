"""State kept between calls of forward: counters that tell the timed calls from the checked ones
(`phase-detect`) and caches of results (`result-cache`), for _ForwardWalker."""

from __future__ import annotations

import ast

from .names import _BUILTIN_NAMES, _OPERATORS
from .report import _at, _line
from .context import _Ctx
from .inference import _kind


class _StateRules:
    """Rules on the state forward keeps: counters and caches (a mixin of _ForwardWalker)."""

    def _judge_counters(self) -> None:
        """State that forward updates from itself is a rejection when it can tell the timed calls
        from the checked ones: a counter (updated by constants only: `self.n += 1`) that anything
        reads, or any such state that a branch or a comparison reads. State only updated, or a
        running statistic read as data (the running mean and variance a BatchNorm keeps in
        training), is a note; the run-time checks (`timed-output`, `stale-output`) judge the outputs."""
        for node, text in self.counters:
            update = ast.unparse(node)
            inside = {id(inner) for inner in ast.walk(node)}
            read = any(seen == text and ident not in inside for ident, seen in self.reads)
            if text in self.tested or (_counts_by_constants(node, text) and read):
                self._phase(node, f"keeps a call counter (`{update}`) and reads it")
            else:
                self.report.add(
                    "phase-detect",
                    f"forward updates `{text}` on every call (`{update}`){_at(node)}; nothing chooses its work "
                    f"by it, so it is a note, not a rejection: the timed calls' outputs are judged",
                    _line(node),
                    severity="note",
                )

    def _cache(self, node: ast.AST, what: str, *keys: ast.AST) -> None:
        """A cache in forward. Keyed on values (sampled elements, a digest of the contents) it is a
        rejection: it returns a stored answer whenever contents repeat, and that answer is right, so
        no run-time check can tell it from computing. Keyed on an input's identity (data_ptr, id,
        hash of a tensor; a CUDA graph, a plan or a schedule per buffer) or on nothing the guard can
        see, it is a note: timed calls refill the same buffers with new contents and their sampled
        outputs are judged (`timed-output`), so a stale answer is rejected at run time."""
        if any(self._value_keyed(key) for key in keys):
            self.report.add(
                "result-cache",
                f"forward {what}{_at(node)}: a cache keyed on the input's values returns a stored answer "
                f"whenever the contents repeat, which no run-time check can tell from computing it; "
                f"outputs must be computed from the inputs on every call, so remove the cache",
                _line(node),
            )
        else:
            self.report.add(
                "result-cache",
                f"forward {what}{_at(node)}: a cache keyed on an input's address or identity is judged at "
                f"run time: timed calls refill the same buffers with new contents and their sampled "
                f"outputs must match (a stale answer is rejected as `timed-output`)",
                _line(node),
                "note",
            )

    def _compare(
        self, node: ast.Compare, ctx: _Ctx, in_handler: bool, taint: dict[str, str], local_names: set[str]
    ) -> None:
        operands = [node.left, *node.comparators]
        value_ops = [op for op in node.ops if not isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn))]
        if value_ops and any(_kind(operand, ctx) == "tensor" for operand in operands):
            self._fallback(node, "a comparison of tensors with PyTorch", in_handler, "computes")
        if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and self._tainted(node.left, taint):
            self._cache(
                node,
                f"tests `{ast.unparse(node)}` against stored keys made from " f"{self._taint_label(node.left, taint)}",
                node.left,
            )
        elif any(isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)) for op in node.ops):
            tainted = [operand for operand in operands if self._tainted(operand, taint)]
            stored = [operand for operand in operands if self._is_state(operand, ctx, local_names)]
            if tainted and stored:
                self._cache(
                    node,
                    f"compares {self._taint_label(tainted[0], taint)} with the stored "
                    f"`{ast.unparse(stored[0])}` to recognise a repeated input",
                    *tainted,
                )

    def _augassign(
        self, node: ast.AugAssign, ctx: _Ctx, in_handler: bool, global_names: set[str], local_names: set[str]
    ) -> None:
        target = node.target
        if _kind(target, ctx) == "tensor":
            self._fallback(
                node, f"`{_OPERATORS.get(type(node.op), '?')}=` on a tensor with PyTorch", in_handler, "computes"
            )
        elif self._is_state(target, ctx, local_names) or (isinstance(target, ast.Name) and target.id in global_names):
            self.counters.append((node, ast.unparse(target)))

    def _assign(
        self, node: ast.Assign, ctx: _Ctx, taint: dict[str, str], global_names: set[str], local_names: set[str]
    ) -> None:
        for target in node.targets:
            state = self._is_state(target, ctx, local_names) or (
                isinstance(target, ast.Name) and target.id in global_names
            )
            if not state:
                continue
            text = ast.unparse(target)
            if isinstance(node.value, ast.BinOp) and any(
                ast.unparse(inner) == text for inner in ast.walk(node.value) if inner is not node.value
            ):
                self.counters.append((node, text))
            elif self._tainted(node.value, taint, identity_only=True):
                self._cache(
                    node,
                    f"stores {self._taint_label(node.value, taint)} in `{text}` to recognise "
                    f"the input on a later call",
                )

    def _is_state(self, node: ast.AST, ctx: _Ctx, local_names: set[str]) -> bool:
        """An expression that survives between calls: self.x, a module global, or an item of one."""
        while isinstance(node, ast.Subscript):
            node = node.value
        if isinstance(node, ast.Attribute):
            root = node
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id == ctx.self_name:
                return True
            return (
                isinstance(root, ast.Name)
                and root.id not in local_names
                and root.id not in self.module.aliases
                and root.id != "self"
            )
        if isinstance(node, ast.Name):
            return (
                node.id not in local_names
                and node.id not in self.module.aliases
                and node.id not in self.module.functions
                and node.id not in self.module.classes
                and node.id not in _BUILTIN_NAMES
                and node.id not in ctx.kinds
            )
        return False

    def _is_cache(self, node: ast.AST, ctx: _Ctx, local_names: set[str]) -> bool:
        kind = _kind(node, ctx)
        if kind in ("tensor", "list", "str"):
            return False
        return kind in ("container", "cached") or self._is_state(node, ctx, local_names)


def _counts_by_constants(update: ast.AST, text: str) -> bool:
    """`update` changes the state `text` by number constants only (`n += 1`, `n = (n + 1) % 4`): a counter."""

    def by_constants(node: ast.AST) -> bool:
        if ast.unparse(node) == text:
            return True
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        if isinstance(node, ast.BinOp):
            return by_constants(node.left) and by_constants(node.right)
        if isinstance(node, ast.UnaryOp):
            return by_constants(node.operand)
        return False

    value = getattr(update, "value", None)
    return value is not None and by_constants(value)
