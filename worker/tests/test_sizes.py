"""Every module of kforge_worker and kforge_sandbox stays within CONTRIBUTING's limits.

Convention 4 (CONTRIBUTING.md): a file stays under 300 lines and a function (or method) under
60, or says why it is longer. Every ``.py`` file is parsed with ``ast`` (nothing is imported):

- a module of more than ``MODULE_LINES`` lines passes when a line of its docstring starts with
  ``Longer than the limit:`` followed by the reason;
- a function of more than ``FUNCTION_LINES`` lines (from its ``def`` to its last line, nested
  functions and methods each on their own) passes when the comment block right above it (above
  its decorators) has a line that starts with ``# Longer than the limit:`` and the reason.

A failure lists every offender with its length, so the list is the work left.
"""

import ast
from pathlib import Path
from typing import List, Set

WORKER_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("kforge_worker", "kforge_sandbox")
MODULE_LINES = 300
FUNCTION_LINES = 60
MARKER = "Longer than the limit:"

#: Offenders left as they are for now, modules by path under worker/, functions as
#: ``path:qualified.name``. The set may only shrink: an entry that no longer offends fails the test
#: until it is removed, and PENDING_MOST (lower it with the set) keeps new ones out.
PENDING: Set[str] = set()
PENDING_MOST = 0


def _has_reason(text: str) -> bool:
    """`text` starts with the marker and goes on to give a reason."""
    return text.startswith(MARKER) and bool(text[len(MARKER) :].strip())


def _module_reason(tree: ast.Module) -> bool:
    docstring = ast.get_docstring(tree) or ""
    return any(_has_reason(line.strip()) for line in docstring.splitlines())


def _comment_reason(lines: List[str], first_line: int) -> bool:
    """Whether the comment block that ends right above line `first_line` (1-based) gives a reason."""
    index = first_line - 2
    while index >= 0 and lines[index].strip().startswith("#"):
        if _has_reason(lines[index].strip().lstrip("#").strip()):
            return True
        index -= 1
    return False


def _functions(node: ast.AST, prefix: str = ""):
    """(qualified name, node) of every function and method below `node`, nested ones too."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = prefix + child.name
            yield name, child
            yield from _functions(child, name + ".")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, prefix + child.name + ".")
        else:
            yield from _functions(child, prefix)


def offenders(path: Path, label: str) -> List[str]:
    """`label` (the module) or `label:name` (a function) with its length, for each over the limit
    without a reason."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = ast.parse(text, filename=str(path))
    found = []
    if len(lines) > MODULE_LINES and not _module_reason(tree):
        found.append((label, len(lines)))
    for name, function in _functions(tree):
        length = function.end_lineno - function.lineno + 1
        first = min([function.lineno] + [decorator.lineno for decorator in function.decorator_list])
        if length > FUNCTION_LINES and not _comment_reason(lines, first):
            found.append((f"{label}:{name}", length))
    return found


def all_offenders() -> dict:
    found = {}
    for package in PACKAGES:
        for path in sorted((WORKER_ROOT / package).rglob("*.py")):
            for label, length in offenders(path, path.relative_to(WORKER_ROOT).as_posix()):
                found[label] = length
    return found


def test_modules_and_functions_are_within_the_limits():
    found = all_offenders()
    over = {label: length for label, length in found.items() if label not in PENDING}
    assert not over, (
        f"over {MODULE_LINES} lines a module or {FUNCTION_LINES} a function, with no "
        f"'{MARKER} <reason>' (CONTRIBUTING.md, convention 4):\n"
        + "\n".join(f"  {label} ({length} lines)" for label, length in sorted(over.items()))
    )


def test_pending_only_shrinks():
    done = PENDING - set(all_offenders())
    assert not done, "within the limits now, remove from PENDING: " + ", ".join(sorted(done))
    assert len(PENDING) <= PENDING_MOST, "PENDING may only shrink: split the new offender or give its reason"


def test_a_reason_lets_a_long_function_pass(tmp_path):
    body = "".join(f"    x{index} = {index}\n" for index in range(FUNCTION_LINES))
    source = tmp_path / "m.py"
    source.write_text(f"def long():\n{body}\n\n# {MARKER} one table.\n@staticmethod\ndef told():\n{body}")
    assert offenders(source, "m.py") == [("m.py:long", FUNCTION_LINES + 1)]


def test_a_reason_lets_a_long_module_pass(tmp_path):
    body = "x = 1\n" * MODULE_LINES
    source = tmp_path / "m.py"
    source.write_text('"""A module."""\n' + body)
    assert offenders(source, "m.py") == [("m.py", MODULE_LINES + 1)]
    source.write_text(f'"""A module.\n\n{MARKER} one table.\n"""\n' + body)
    assert offenders(source, "m.py") == []
