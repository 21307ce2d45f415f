"""Taint tracking in the walked functions: which local names and expressions carry an input's
identity (data_ptr, id, hash) or its values (sampled elements, a digest), for _ForwardWalker's
cache findings."""

from __future__ import annotations

import ast
from typing import Mapping

from .names import _IDENTITY_METHODS, _KEY_BUILDERS, _SAMPLING_METHODS
from .context import _Ctx
from .inference import _kind


#: How the labels of keys made from the input's values begin (`_sources`); every other label is an
#: identity (an address, an id, a version counter).
_VALUE_LABELS = ("sampled values", "a digest of")


class _KeySources:
    """Where keys come from: an input's identity or values (a mixin of _ForwardWalker)."""

    def _taints(self, nodes: list[ast.AST], ctx: _Ctx) -> dict[str, str]:
        """Local names holding an input's identity (data_ptr, id, hash) or values (item, tolist, a
        digest of the contents); a name holding both is bound to its values' label."""
        taint: dict[str, str] = {}

        def bind(target: ast.AST, source: str) -> None:
            if isinstance(target, ast.Name):
                taint[target.id] = source
            elif isinstance(target, (ast.Tuple, ast.List)):
                for element in target.elts:
                    bind(element, source)

        for _ in range(2):
            for node in nodes:
                if isinstance(node, ast.Assign):
                    source = self._source(node.value, taint, ctx)
                    if source:
                        for target in node.targets:
                            bind(target, source)
        return taint

    def _source(self, node: ast.AST, taint: Mapping[str, str], ctx: _Ctx) -> str | None:
        """The label of what a key-like expression is made from: its values where any part of it
        is (sampled elements, a digest), otherwise its identity; None when neither."""
        labels = self._sources(node, taint, ctx)
        values = [label for label in labels if label.startswith(_VALUE_LABELS)]
        return (values or labels or [None])[0]

    def _sources(self, node: ast.AST, taint: Mapping[str, str], ctx: _Ctx, depth: int = 0) -> list[str]:
        """Where a key-like expression gets an input's identity or values from, every source.

        Taint flows through key-building (tuples, f-strings, str/tuple/hash, arithmetic), not
        through computation: a tensor built from ``x.tolist()`` is an output, not a key.
        """
        if depth > 30:
            return []
        if isinstance(node, ast.Call):
            return self._call_sources(node, taint, ctx, depth)
        if isinstance(node, ast.Attribute):
            if node.attr in ("_version", "_cdata"):
                return [] if self._module_state(node.value, ctx) else [f"`{ast.unparse(node)}`"]
            return self._sources(node.value, taint, ctx, depth + 1)
        if isinstance(node, ast.Name):
            return [taint[node.id]] if node.id in taint else []
        if isinstance(
            node,
            (
                ast.Tuple,
                ast.List,
                ast.Set,
                ast.BinOp,
                ast.JoinedStr,
                ast.FormattedValue,
                ast.Subscript,
                ast.Starred,
                ast.BoolOp,
                ast.UnaryOp,
            ),
        ):
            return [
                label for child in ast.iter_child_nodes(node) for label in self._sources(child, taint, ctx, depth + 1)
            ]
        return []

    def _call_sources(self, node: ast.Call, taint: Mapping[str, str], ctx: _Ctx, depth: int) -> list[str]:
        """`_sources` of a call: an identity (id, data_ptr, hash of a tensor), sampled values (item,
        tolist), or what a key-building call or a digest is made from."""
        qual = ctx.qual(node.func) or ""
        method = node.func.attr if isinstance(node.func, ast.Attribute) else None
        if (
            qual == "builtins.id"
            or (qual == "builtins.hash" and node.args and _kind(node.args[0], ctx) == "tensor")
            or method in _IDENTITY_METHODS
        ):
            # hash() of a tensor is its id(); hash() of anything else is keyed on what it hashes
            subject = node.func.value if method in _IDENTITY_METHODS else (node.args[0] if node.args else None)
            if subject is not None and self._module_state(subject, ctx):
                return []  # keyed on a parameter or buffer, not on an input: a packed weight
            return [f"`{ast.unparse(node)}`"]
        if method in _SAMPLING_METHODS and _kind(node.func.value, ctx) == "tensor":
            if self._module_state(node.func.value, ctx):
                return []
            return [f"sampled values (`{ast.unparse(node)}`)"]
        digest = qual.startswith(("hashlib.", "zlib.crc32", "zlib.adler32"))
        if (
            digest
            or qual in _KEY_BUILDERS
            or qual == "builtins.hash"
            or method in ("hexdigest", "digest", "encode", "format", "join")
        ):
            parts = list(node.args) + [keyword.value for keyword in node.keywords]
            if method:
                parts.append(node.func.value)
            found = [label for part in parts for label in self._sources(part, taint, ctx, depth + 1)]
            if digest and not found and any(self._reads_tensor(part, ctx) for part in parts):
                # a digest of bytes read from the tensor (`hashlib.sha1(x.numpy().tobytes())`)
                return [f"a digest of the contents (`{ast.unparse(node)}`)"]
            return found
        return []

    def _reads_tensor(self, node: ast.AST, ctx: _Ctx) -> bool:
        """`node` reads an input tensor (its bytes, its numpy view): a tensor that is not the module's own."""
        return any(
            isinstance(inner, ast.Name) and _kind(inner, ctx) == "tensor" and not self._module_state(inner, ctx)
            for inner in ast.walk(node)
        )

    def _value_keyed(self, node: ast.AST) -> bool:
        """The key is made, at least in part, from the input's values."""
        return any(label.startswith(_VALUE_LABELS) for label in self._sources(node, self.taint, self.ctx))

    def _module_state(self, node: ast.AST, ctx: _Ctx) -> bool:
        """`self.weight`, `self.conv.weight`, `self.params[0]`, or a local name bound to one
        (`weight = self.linear.weight`): the module's own parameters and buffers (state keyed on
        them is a weight packed once, not an answer cached for an input)."""
        while isinstance(node, (ast.Attribute, ast.Subscript)) or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("detach", "contiguous", "t", "view", "reshape")
        ):
            node = node.func.value if isinstance(node, ast.Call) else node.value
        if not isinstance(node, ast.Name):
            return False
        return (ctx.self_name is not None and node.id == ctx.self_name) or node.id in self.state_names

    def _state_aliases(self, nodes: list[ast.AST], ctx: _Ctx) -> set[str]:
        """Local names assigned only from the module's own state (see `_module_state`)."""
        self.state_names = set()
        sources: dict[str, list[ast.AST]] = {}
        for node in nodes:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        sources.setdefault(target.id, []).append(node.value)
        for _ in range(2):
            for name, values in sources.items():
                if all(self._module_state(value, ctx) for value in values):
                    self.state_names.add(name)
        return self.state_names

    def _tainted(self, node: ast.AST, taint: Mapping[str, str], identity_only: bool = False) -> bool:
        label = self._source(node, taint, self.ctx)
        return label is not None and not (identity_only and label.startswith(_VALUE_LABELS))

    def _taint_label(self, node: ast.AST, taint: Mapping[str, str]) -> str:
        return self._source(node, taint, self.ctx) or "the input's identity"
