"""The module-level imports of kforge_worker and kforge_sandbox form no cycle.

Every ``.py`` file of the two packages is parsed with ``ast`` (nothing is imported). An edge
A -> B is an ``import B`` or ``from B import x`` that runs when A is imported: a statement at
module level, including those nested in ``if``/``try``/``with`` blocks and class bodies.
Relative imports are resolved against the importing module's package, and ``from P import x``
adds the edge to ``P.x`` as well when ``P.x`` is a module of the packages.

Excluded, on purpose:

- imports inside a function or lambda body: they run when the function is called, after every
  module has been imported, so they cannot make a start-up cycle (``__main__.py`` imports the role
  it runs this way, so that ``prime`` and ``estimate`` do not import torch's stack);
- the implicit import of a module's parent packages: a package's ``__init__`` that imports its own
  submodules (``guard/static/__init__.py``) is the usual pattern, not a cycle.

A cycle fails the test with its modules in order, e.g. ``a -> b -> c -> a``.
"""

import ast
from pathlib import Path
from typing import Dict, List, Optional, Set

WORKER_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("kforge_worker", "kforge_sandbox")


def _modules() -> Dict[str, Path]:
    """Dotted module name -> file, for every module of PACKAGES (a package by its __init__.py)."""
    found: Dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((WORKER_ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(WORKER_ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _module_level_imports(node: ast.AST):
    """Import statements that run when the module is imported (function bodies excluded)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
        elif not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _module_level_imports(child)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    if node.level - 1 > len(package) - 1:
        raise AssertionError(f"{module}: `from {'.' * node.level}{node.module or ''} import ...` leaves the package")
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph(every_import: bool = False) -> Dict[str, Set[str]]:
    """Module -> the modules of PACKAGES it imports at module level (with `every_import`, also
    inside functions: what it depends on, whenever the import runs)."""
    modules = _modules()
    graph: Dict[str, Set[str]] = {}
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets: Set[str] = set()
        nodes = (
            [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
            if every_import
            else _module_level_imports(tree)
        )
        for node in nodes:
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            else:
                base = _resolve(module, is_package, node)
                targets.add(base)
                targets.update(f"{base}.{alias.name}" for alias in node.names)
        graph[module] = {target for target in targets if target in modules and target != module}
    return graph


def find_cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """One cycle of `graph` as [a, b, ..., a], or None when it has none (depth-first search)."""
    state: Dict[str, int] = {}  # 1: on the current path, 2: done
    path: List[str] = []

    def visit(node: str) -> Optional[List[str]]:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


def test_the_packages_are_found():
    graph = import_graph()
    assert "kforge_worker.roles.candidate_role" in graph
    assert "kforge_worker.guard.static.analysis" in graph
    assert "kforge_sandbox.launch" in graph
    # Relative imports resolve: the candidate role imports the channel, the stage checks the static stage.
    assert "kforge_worker.protocol.channel" in graph["kforge_worker.roles.candidate_role"]
    assert "kforge_worker.guard.static_stage" in graph["kforge_worker.guard.stage_checks"]


def test_module_level_imports_have_no_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_find_cycle_names_the_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_imports_inside_functions_are_left_out():
    tree = ast.parse("import os\nif True:\n    import sys\ndef f():\n    import json\nclass C:\n    import re\n")
    names = [alias.name for node in _module_level_imports(tree) for alias in node.names]
    assert names == ["os", "sys", "re"]


#: kforge_worker's rooms, each importing only rooms after it: the entry, the roles that run the
#: stages, the timing stage, the judge's comparison, the guard, the build, the problem, the
#: protocol's messages and errors, the device, the backends (what each decides, asked by name or
#: device type; they import no other room); the package itself holds only the protocol version.
ROOM_ORDER = (
    "__main__",
    "roles",
    "timing",
    "tolerance",
    "guard",
    "build",
    "problem",
    "protocol",
    "device",
    "backends",
    "",
)

#: Imports that run back up, each with what it needs from the room above. Issue 42 asks for none,
#: and there are none: a new back edge fails the test (so does one that is gone but still listed).
KNOWN_BACK_EDGES: Set[tuple] = set()


def room_of(module: str) -> str:
    """`kforge_worker.guard.static.names` -> `guard`; the package itself -> ``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def back_edges(graph: Dict[str, Set[str]]) -> Set[tuple]:
    """(importer, imported) of kforge_worker whose rooms run against ROOM_ORDER."""
    found = set()
    for module, targets in graph.items():
        if not module.startswith("kforge_worker"):
            continue
        for target in targets:
            if not target.startswith("kforge_worker"):
                continue
            if ROOM_ORDER.index(room_of(module)) > ROOM_ORDER.index(room_of(target)):
                found.add((module, target))
    return found


def test_every_room_is_in_the_order():
    rooms = {room_of(module) for module in _modules() if module.startswith("kforge_worker")}
    assert rooms == set(ROOM_ORDER), rooms ^ set(ROOM_ORDER)


def test_rooms_import_one_way_but_for_the_listed_edges():
    found = back_edges(import_graph(every_import=True))
    assert found - KNOWN_BACK_EDGES == set(), "imports running back up: " + ", ".join(
        f"{module} -> {target}" for module, target in sorted(found - KNOWN_BACK_EDGES)
    )
    assert KNOWN_BACK_EDGES - found == set(), "gone, remove from KNOWN_BACK_EDGES: " + ", ".join(
        f"{module} -> {target}" for module, target in sorted(KNOWN_BACK_EDGES - found)
    )


def test_a_back_edge_is_found():
    graph = {"kforge_worker.device.x": {"kforge_worker.roles.y"}, "kforge_worker.roles.y": {"kforge_worker.device.x"}}
    assert back_edges(graph) == {("kforge_worker.device.x", "kforge_worker.roles.y")}
