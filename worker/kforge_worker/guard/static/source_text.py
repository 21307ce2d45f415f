"""The text of strings handed to load_inline: an expression resolved to segments of text, each
with its first line in the candidate's file, through names, f-strings, joins and concatenation.
"""

from __future__ import annotations

import ast

from .report import _line
from .symbols import _Module, _qualname

_Segments = list[tuple[str, int | None]]


def _resolve_text(
    node: ast.AST | None, module: _Module, depth: int = 0, used: set[int] | None = None
) -> _Segments | None:
    """Resolve an expression to string segments ``(text, first line)``, or ``None`` if unknown."""
    if node is None or depth > 12:
        return None
    used = used if used is not None else set()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        used.add(id(node))
        return [(node.value, node.lineno)]
    if isinstance(node, ast.JoinedStr):
        segments: _Segments = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                used.add(id(value))
                segments.append((value.value, node.lineno))
            elif isinstance(value, ast.FormattedValue):
                segments.extend(_resolve_text(value.value, module, depth + 1, used) or [(" ", node.lineno)])
        return segments
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _resolve_text(node.left, module, depth + 1, used)
        right = _resolve_text(node.right, module, depth + 1, used)
        if left is None and right is None:
            return None
        return (left or [(" ", _line(node))]) + (right or [(" ", _line(node))])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _resolve_text(node.left, module, depth + 1, used)
    if isinstance(node, (ast.List, ast.Tuple)):
        segments = []
        for item in node.elts:
            segments.extend((_resolve_text(item, module, depth + 1, used) or []) + [("\n", _line(item))])
        return segments or None
    if isinstance(node, ast.Name):
        definitions = module.string_defs.get(node.id, [])
        segments = []
        for operator, value in definitions:
            resolved = _resolve_text(value, module, depth + 1, used)
            if resolved is None:
                continue
            segments = resolved if operator == "=" and not segments else segments + [("\n", None)] + resolved
        return segments or None
    if isinstance(node, ast.Call):
        return _resolve_call_text(node, module, depth, used)
    return None


def _resolve_call_text(node: ast.Call, module: _Module, depth: int, used: set[int]) -> _Segments | None:
    qual = _qualname(node.func, module.aliases)
    if qual in ("textwrap.dedent", "inspect.cleandoc", "builtins.str") and node.args:
        return _resolve_text(node.args[0], module, depth + 1, used)
    if isinstance(node.func, ast.Attribute):
        receiver = _resolve_text(node.func.value, module, depth + 1, used)
        method = node.func.attr
        if method == "join" and receiver is not None and node.args:
            separator = "".join(text for text, _ in receiver)
            inner = node.args[0]
            if isinstance(inner, (ast.List, ast.Tuple)):
                pieces: _Segments = []
                for index, item in enumerate(inner.elts):
                    if index:
                        pieces.append((separator, _line(item)))
                    pieces.extend(_resolve_text(item, module, depth + 1, used) or [])
                return pieces
            return _resolve_text(inner, module, depth + 1, used)
        if receiver is None:
            return None
        if method in ("strip", "lstrip", "rstrip", "format", "encode", "decode", "upper", "lower"):
            return (
                receiver
                if method not in ("upper", "lower")
                else [(getattr(text, method)(), line) for text, line in receiver]
            )
        if method == "replace" and len(node.args) >= 2:
            old = _resolve_text(node.args[0], module, depth + 1, used)
            new = _resolve_text(node.args[1], module, depth + 1, used)
            if old is not None and new is not None:
                old_text, new_text = "".join(t for t, _ in old), "".join(t for t, _ in new)
                line = receiver[0][1]
                return [("".join(t for t, _ in receiver).replace(old_text, new_text), line)]
            return receiver
    return None


def _join_segments(segments: _Segments) -> tuple[str, list[tuple[int, int | None]]]:
    starts: list[tuple[int, int | None]] = []
    text_parts: list[str] = []
    offset = 0
    for text, line in segments:
        starts.append((offset, line))
        text_parts.append(text)
        offset += len(text)
    return "".join(text_parts), starts


def _line_at(starts: list[tuple[int, int | None]], text: str, offset: int) -> int | None:
    chosen = None
    for start, line in starts:
        if start > offset:
            break
        if line is not None:
            chosen = (start, line)
    if chosen is None:
        return None
    return chosen[1] + text.count("\n", chosen[0], offset)
