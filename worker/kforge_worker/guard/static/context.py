"""What type inference works in: a function's context (`_Ctx`: the module, the class, the kinds of
its names) and what the guard knows of a class (`_ClassInfo`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .symbols import _Module, _qualname

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass
class _ClassInfo:
    node: ast.ClassDef
    methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
    attr_kinds: dict[str, str] = field(default_factory=dict)
    attr_quals: dict[str, str] = field(default_factory=dict)
    attr_aliases: dict[str, str] = field(default_factory=dict)


@dataclass
class _Ctx:
    module: _Module
    cls: _ClassInfo | None
    self_name: str | None
    kinds: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)

    def qual(self, node: ast.AST) -> str | None:
        found = _qualname(node, self.module.aliases, self.aliases, self.module.local_names)
        if found is None and self.cls is not None and isinstance(node, ast.Attribute):
            chain: list[str] = []
            current: ast.AST = node
            while isinstance(current, ast.Attribute):
                chain.append(current.attr)
                current = current.value
            if (
                isinstance(current, ast.Name)
                and current.id in (self.self_name, self.cls.node.name)
                and chain[-1] in self.cls.attr_aliases
            ):
                return ".".join([self.cls.attr_aliases[chain[-1]], *reversed(chain[:-1])])
        return found
