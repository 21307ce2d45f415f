"""The C++/CUDA sources a candidate hands to load_inline (or writes as native strings), with their
lines in the candidate's file, and their text without comments (native.py scans them).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .native_patterns import _NATIVE_MARKERS
from .source_text import _Segments, _join_segments, _line_at, _resolve_text
from .symbols import _Module, _call_argument, _qualname


def _strip_cpp(text: str, strings: bool) -> str:
    """Blank comments (and string/char literal contents when ``strings``), keeping offsets and newlines."""
    out = list(text)
    index, length = 0, len(text)

    def blank(start: int, end: int) -> None:
        for position in range(start, min(end, length)):
            if out[position] != "\n":
                out[position] = " "

    while index < length:
        char = text[index]
        following = text[index + 1] if index + 1 < length else ""
        if char == "/" and following == "/":
            end = text.find("\n", index)
            end = length if end < 0 else end
            blank(index, end)
            index = end
        elif char == "/" and following == "*":
            end = text.find("*/", index + 2)
            end = length if end < 0 else end + 2
            blank(index, end)
            index = end
        elif char in "\"'":
            previous = text[index - 1] if index else ""
            if char == "'" and previous.isalnum() and following.isalnum():
                index += 1  # digit separator (1'000)
                continue
            end = index + 1
            while end < length and text[end] != char and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            if strings:
                blank(index + 1, end)
            index = end + 1
        else:
            index += 1
    return "".join(out)


@dataclass
class _NativeSource:
    segments: _Segments
    text: str = ""
    starts: list[tuple[int, int | None]] = field(default_factory=list)
    without_comments: str = ""
    code: str = ""

    def __post_init__(self) -> None:
        self.text, self.starts = _join_segments(self.segments)
        self.without_comments = _strip_cpp(self.text, strings=False)
        self.code = _strip_cpp(self.text, strings=True)

    def line(self, offset: int) -> int | None:
        return _line_at(self.starts, self.text, offset)


def _native_sources(module: _Module) -> tuple[list[_NativeSource], list[tuple[ast.Call, str, str]]]:
    """The C++/CUDA sources of the module and the compiler flags handed to load_inline."""
    used: set[int] = set()
    sources: list[_NativeSource] = []
    flags: list[tuple[ast.Call, str, str]] = []
    for call in module.builders:
        if not (_qualname(call.func, module.aliases) or "").endswith("load_inline"):
            continue
        for keyword, position in (("cpp_sources", 1), ("cuda_sources", 2)):
            segments = _resolve_text(_call_argument(call, keyword, position), module, used=used)
            if segments:
                sources.append(_NativeSource(segments))
        for keyword in ("extra_cflags", "extra_cuda_cflags", "extra_ldflags"):
            segments = _resolve_text(_call_argument(call, keyword, None), module, used=used)
            if segments:
                flags.append((call, keyword, " ".join(text for text, _ in segments)))
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Call):
            qual = _qualname(node.func, module.aliases) or ""
            if qual.endswith((".RawKernel", ".RawModule", ".SourceModule")):
                segments = _resolve_text(_call_argument(node, "code", 0), module, used=used)
                if segments:
                    sources.append(_NativeSource(segments))
    for node in ast.walk(module.tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in used
            and any(marker in node.value for marker in _NATIVE_MARKERS)
        ):
            sources.append(_NativeSource([(node.value, node.lineno)]))
    return sources, flags
