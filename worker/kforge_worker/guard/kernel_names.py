"""GPU kernel names as the profiler and cuobjdump spell them, and which launched kernels are the
candidate's own (`own-kernel`, own_kernel.py).

The profiler (Kineto over CUPTI) reports kernels demangled, with return type, template arguments
and parameters: `void kforge_relu_kernel<float>(float const*, float*, int)`,
`(anonymous namespace)::tile_kernel(float*, int)`, `plain_c_kernel` (extern "C"), and JIT
kernels by their function's name (Triton's `add_kernel`; Triton 2.x appended a specialisation
suffix such as `_0d1d2de`: the backend's `jit_launch_suffix`, backends/*/trace_names.py).
cuobjdump lists the kernels of a shared object mangled (`_Z18kforge_relu_kernelIfEvPKT_PS0_i`);
build_info.py demangles them with c++filt where it is installed, which gives the profiler's
spelling (checked on an H200, torch 2.11: identical strings).

A launched kernel is the candidate's own when its full name equals one of its built kernels; or,
where the spellings differ (no c++filt, another demangler), when the qualified names
(namespaces and identifier, without template arguments and parameters) are equal, except in
PyTorch's own namespaces (:data:`RESERVED_NAMESPACES`), so that a candidate cannot claim
`at::native::vectorized_elementwise_kernel` by compiling a kernel of that name; or when it is one
of the names of the candidate's JIT functions (Triton's).
"""

import re
from dataclasses import dataclass, field
from typing import FrozenSet, Iterable, Optional

from ..backends.registry import JIT_LAUNCH_SUFFIXES

#: Qualified-name prefixes of PyTorch's kernels: only an exact full-name match makes them own.
RESERVED_NAMESPACES = ("at::", "c10::", "torch::", "at_cuda_detail::", "caffe2::")
#: The profiler's device events that are copies and fills, not kernels.
COPY_PREFIXES = ("Memcpy", "Memset")
ANONYMOUS = "(anonymous namespace)"
DISPLAY_LIMIT_CHARS = 96


def _without_templates(name: str) -> str:
    """`void foo<float, (int)4>(float*)` → `void foo(float*)` (every balanced `<…>` removed; the
    `<` and `>` of `operator<<`-like names are not expected in kernel names)."""
    kept, depth = [], 0
    for char in name:
        if char == "<":
            depth += 1
        elif char == ">" and depth > 0:
            depth -= 1
        elif depth == 0:
            kept.append(char)
    return "".join(kept)


def _without_parameters(name: str) -> str:
    """Drops a trailing `(…)` parameter list (and a trailing ` const`)."""
    text = name.rstrip()
    if text.endswith(" const"):
        text = text[: -len(" const")].rstrip()
    if not text.endswith(")"):
        return text
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        if text[index] == ")":
            depth += 1
        elif text[index] == "(":
            depth -= 1
            if depth == 0:
                head = text[:index]
                return head if head.strip() else text
    return text


def _last_top_level_token(text: str) -> str:
    """The last space-separated token outside parentheses (drops a return type such as `void`)."""
    depth, start = 0, 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif char == " " and depth == 0:
            start = index + 1
    return text[start:].strip()


def _mangled_qualified_name(mangled: str) -> Optional[str]:
    """`ns::foo` from an Itanium-mangled function name (`_ZN2ns3fooIfEEvPKf`, `_Z3fooPf`);
    None where it does not parse. Kernels are free functions, so only namespaces nest."""
    text, position, parts = mangled, 2, []
    nested = text.startswith("N", position)
    position += 1 if nested else 0
    while position < len(text) and text[position] in "rVKL":
        position += 1
    while position < len(text):
        if text.startswith("St", position):
            parts.append("std")
            position += 2
            continue
        digits = re.match(r"\d+", text[position:])
        if digits is None:
            break
        length = int(digits.group(0))
        start = position + len(digits.group(0))
        identifier = text[start : start + length]
        if len(identifier) != length:
            return None
        parts.append(ANONYMOUS if identifier.startswith("_GLOBAL__N") else identifier)
        position = start + length
        if not nested:
            break
    return "::".join(parts) if parts else None


def qualified_name(name: str) -> str:
    """Namespaces and identifier of a kernel name, demangled or mangled:
    `void ns::foo<float>(float const*)` → `ns::foo`; `_Z3fooPf` → `foo`; `add_kernel` → itself."""
    text = name.strip()
    if text.startswith("_Z"):
        return _mangled_qualified_name(text) or text
    bare = _last_top_level_token(_without_parameters(_without_templates(text)))
    return bare or text


def display_name(name: str) -> str:
    """The qualified name, with `<…>` where the kernel is a template instance, for messages."""
    shown = qualified_name(name) + ("<…>" if "<" in name and not name.startswith("_Z") else "")
    return shown if len(shown) <= DISPLAY_LIMIT_CHARS else shown[: DISPLAY_LIMIT_CHARS - 1] + "…"


def is_copy(name: str) -> bool:
    """A device copy or fill the profiler lists beside the kernels (`Memcpy DtoD (Device -> Device)`)."""
    return name.startswith(COPY_PREFIXES)


@dataclass(frozen=True)
class OwnKernels:
    """The candidate's own kernels: `built` as cuobjdump lists those of its extensions (demangled
    where c++filt ran), `jit` the names of its JIT functions (Triton's)."""

    built: FrozenSet[str] = frozenset()
    jit: FrozenSet[str] = frozenset()
    _qualified: FrozenSet[str] = field(default=frozenset(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_qualified", frozenset(qualified_name(name) for name in self.built))

    @classmethod
    def of(cls, built: Iterable[str] = (), jit: Iterable[str] = ()) -> "OwnKernels":
        return cls(built=frozenset(built), jit=frozenset(jit))

    @property
    def empty(self) -> bool:
        return not self.built and not self.jit

    def owns(self, launched: str) -> bool:
        """Whether the profiler's kernel name `launched` is one of these kernels (module docs)."""
        if launched in self.built or launched in self.jit:
            return True
        qualified = qualified_name(launched)
        if qualified in self._qualified and not qualified.startswith(RESERVED_NAMESPACES):
            return True
        for name in self.jit:
            rest = launched[len(name) + 1 :]
            if launched.startswith(name + "_") and any(suffix.fullmatch(rest) for suffix in JIT_LAUNCH_SUFFIXES):
                return True
        return False

    def names(self) -> list:
        """Display names of every own kernel, sorted."""
        return sorted({display_name(name) for name in self.built} | set(self.jit))
