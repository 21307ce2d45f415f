"""A problem's forbidden names (problem.yaml `forbidden`, docs/guard.md "Forbidden names"), judged
by what runs wherever that can be seen, and by the candidate's source only where it cannot.

Each name is read as one of three kinds:

- **An operator**: a PyTorch function or method that reaches the dispatcher under its own name
  (`torch.topk`, `Tensor.sort`, `torch.ops.aten._scaled_mm`, `F.xxx` where ATen has `xxx` and it
  is not a composite of other operators). The traced correctness call's operators
  (dispatch_trace.py) are read: a call that dispatched it is `rejected` with check `forbidden`,
  from the candidate's Python or its C++ alike. Spelling it in a comment or a string is nothing.
- **A module** (`vllm.attention`, `import sonic_moe`, `from sonic_moe`): loaded by the candidate
  (new in `sys.modules` after its import or its calls) is `forbidden`.
- **Anything else** (a composite PyTorch function the dispatcher never sees by its name, such as
  `torch.matmul` or `F.linear`; a function of a module, `flashinfer.decode`; a bare name,
  `chunk_kda`): nothing at run time can tell whether it ran, so the candidate is refused before it
  runs where its source uses the name: an attribute chain or an import that resolves to it (import
  aliases followed: `import torch.nn.functional as F` then `F.linear`), or for a bare name any use
  of it that the file does not define itself. Comments and strings are not uses.
"""

import ast
import sys
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Set, Tuple

import torch

CHECK = "forbidden"
#: Spellings of PyTorch's namespaces in forbidden lists, and the namespace each stands for.
ALIASES = (
    ("torch.ops.aten.", "torch.ops.aten."),
    ("torch.nn.functional.", "torch.nn.functional."),
    ("nn.functional.", "torch.nn.functional."),
    ("F.", "torch.nn.functional."),
    ("torch.Tensor.", "torch.Tensor."),
    ("Tensor.", "torch.Tensor."),
    ("torch.", "torch."),
)


def _aten_operator(name: str) -> Optional[str]:
    """The ATen operator `name` reaches the dispatcher as, or None (no such operator, or a
    composite that is decomposed before the dispatcher's modes see it)."""
    if not name.isidentifier() or not hasattr(torch.ops.aten, name):
        return None
    has_kernel = getattr(torch._C, "_dispatch_has_kernel_for_dispatch_key", None)
    if has_kernel is None:
        return None
    try:
        composite = has_kernel(f"aten::{name}", "CompositeImplicitAutograd")
    except RuntimeError:
        return None
    return None if composite else name


def canonical(name: str) -> str:
    """The forbidden name with PyTorch's short spellings written out (`F.linear` ->
    `torch.nn.functional.linear`, `Tensor.sort` -> `torch.Tensor.sort`)."""
    for spelled, meant in ALIASES:
        if name.startswith(spelled):
            return meant + name[len(spelled) :]
    return name


@dataclass
class ForbiddenNames:
    """The problem's forbidden names, sorted by how each is judged."""

    operators: Dict[str, str] = field(default_factory=dict)  # ATen base name -> the entry as written
    modules: Dict[str, str] = field(default_factory=dict)  # module -> the entry as written
    sources: Dict[str, str] = field(default_factory=dict)  # canonical dotted or bare name -> entry

    @classmethod
    def of(cls, entries: Iterable[str]) -> "ForbiddenNames":
        names = cls()
        for entry in entries:
            written = entry.strip()
            words = written.split()
            if len(words) == 2 and words[0] in ("import", "from"):
                names.modules[words[1]] = written
                continue
            full = canonical(written)
            for namespace in ("torch.ops.aten.", "torch.nn.functional.", "torch.Tensor.", "torch."):
                if full.startswith(namespace) and "." not in full[len(namespace) :]:
                    operator = _aten_operator(full[len(namespace) :])
                    if operator is not None:
                        names.operators[operator] = written
                        break
            else:
                if "." in full and not full.startswith("torch."):
                    names.modules[full] = written
                names.sources[full] = written
        return names

    def __bool__(self) -> bool:
        return bool(self.operators or self.modules or self.sources)

    # --- before the candidate runs ------------------------------------------------------------

    def in_source(self, source: str) -> List[Tuple[str, int]]:
        """(entry as written, line) for each use the source makes of a name judged by source."""
        if not self.sources:
            return []
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return []  # the build says so
        uses = _Uses(tree)
        found = []
        for name, written in self.sources.items():
            line = uses.line_of(name)
            if line is not None:
                found.append((written, line))
        return found

    # --- at run time -----------------------------------------------------------------------------

    def dispatched(self, operator_names: Iterable[Tuple[str, int]]) -> List[str]:
        """What a traced call dispatched of the forbidden operators, in words; `operator_names` are
        (`aten::topk` or `aten::sort.stable`, count) pairs."""
        said = []
        for name, count in operator_names:
            namespace, _, rest = name.partition("::")
            base = rest.split(".")[0]
            if namespace == "aten" and base in self.operators:
                said.append(f"`{self.operators[base]}` (aten::{base} dispatched {count} time(s))")
        return said

    def loaded(self, before: Set[str]) -> List[str]:
        """The forbidden modules loaded since `before` (sys.modules' names then), in words."""
        new = set(sys.modules) - before
        return [
            f"`{written}` (the module {module} was imported)"
            for module, written in self.modules.items()
            if module in new
        ]


def check_loaded(names: ForbiddenNames, before: Set[str], where: str) -> None:
    """Rejects (`forbidden`) a candidate that loaded a forbidden module since `before`."""
    loaded = names.loaded(before)
    if loaded:
        from ..protocol.errors import StageFailure

        raise StageFailure(
            "rejected", CHECK, f"{where}: the problem forbids {', '.join(loaded)} (its problem.yaml `forbidden`)"
        )


class _Uses(ast.NodeVisitor):
    """Where a file uses each dotted name (import aliases resolved) and each bare name, and which
    names it defines itself."""

    def __init__(self, tree: ast.AST):
        self.aliases: Dict[str, str] = {}
        self.dotted: Dict[str, int] = {}
        self.bare: Dict[str, int] = {}
        self.defined: Set[str] = set()
        self.visit(tree)

    def _use(self, table: Dict[str, int], name: str, line: int) -> None:
        table.setdefault(name, line)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.aliases[alias.asname or alias.name.split(".")[0]] = (
                alias.name if alias.asname else alias.name.split(".")[0]
            )
            self._use(self.dotted, alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            full = f"{module}.{alias.name}" if module else alias.name
            self.aliases[alias.asname or alias.name] = full
            self._use(self.dotted, full, node.lineno)
            self._use(self.bare, alias.name, node.lineno)
        self._use(self.dotted, module, node.lineno)

    def _chain(self, node: ast.AST) -> Tuple[Optional[str], Optional[str]]:
        """(the dotted name an attribute chain resolves to, its root name), or (None, None) for a
        chain on a value (a call, a subscript)."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None, None
        head = self.aliases.get(node.id, node.id)
        return canonical(".".join([head, *reversed(parts)])), node.id

    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain, root = self._chain(node)
        if chain is not None:
            self._use(self.dotted, chain, node.lineno)
        if root is None or (root not in self.aliases and root not in ("torch", "F", "nn")):
            # An attribute of a value, not of a module: `x.argsort()` uses torch.Tensor.argsort.
            self._use(self.dotted, f"torch.Tensor.{node.attr}", node.lineno)
        self._use(self.bare, node.attr, node.lineno)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self.defined.add(node.id)
        else:
            self._use(self.bare, node.id, node.lineno)
            resolved = self.aliases.get(node.id)
            if resolved is not None:
                self._use(self.dotted, resolved, node.lineno)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.defined.add(node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.defined.add(node.name)
        self.generic_visit(node)

    def line_of(self, name: str) -> Optional[int]:
        if "." in name:
            return self.dotted.get(name)
        if name in self.defined and name not in self.aliases:
            return None
        return self.bare.get(name)
