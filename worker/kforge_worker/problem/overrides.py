"""Problem size overrides (`kforge eval --set batch_size=256`): module-level constants of a problem
file replaced before anything of it runs.

The problem's source is parsed, and after every top-level statement that assigns an overridden
name (`batch_size = 4096`, `height = width = 128`, `dim: int = 393216`) an assignment of the new
value is inserted. Constants computed from it further down the file (`bias_shape = (out_channels,
1, 1)`) therefore follow, as they would had the file been edited. A name the file never assigns at
its top level is `invalid_input` with its own check, `problem-override` (the command was misused:
`kforge eval` exits 2 on it), naming the constants the file has. Values are numbers or booleans.

Any name the file assigns at its top level can be overridden, in any case (`batch_size`, and
KernelBench's `N`, `M`, `K`, `BATCH`); the ones listed to a person (`public_constants`) leave
out private names (`_cache`) and kforge's own declarations (`KFORGE_PRESETS`, `KFORGE_TOLERANCE`).
"""

import ast
from typing import Dict, Iterable, List, Union

from ..protocol.errors import StageFailure

Value = Union[int, float, bool]
# The check of an override naming a constant the problem lacks: the caller's misuse, not the file's.
OVERRIDE_CHECK = "problem-override"
#: Names of kforge's own declarations in a problem file (`KFORGE_PRESETS`), never a size.
KFORGE_PREFIX = "KFORGE_"


def _assigned_names(statement: ast.stmt) -> List[str]:
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        targets = [statement.target]
    else:
        return []
    names = []
    for target in targets:
        if isinstance(target, ast.Name):
            names.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            names.extend(item.id for item in target.elts if isinstance(item, ast.Name))
    return names


def module_constants(tree: ast.Module) -> List[str]:
    """Names the module assigns at its top level, in order of first assignment."""
    return list(dict.fromkeys(name for statement in tree.body for name in _assigned_names(statement)))


def public_constants(names: Iterable[str]) -> List[str]:
    """The constants to name to a person (and that `--fit` may change): every assigned name but
    private ones (`_x`) and kforge's own declarations (`KFORGE_*`), upper case included (`N`)."""
    return [name for name in names if not name.startswith("_") and not name.startswith(KFORGE_PREFIX)]


def _assignment(name: str, value: Value, like: ast.stmt) -> ast.stmt:
    statement = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=ast.Constant(value=value))
    return ast.copy_location(statement, like)


def compile_with_overrides(source: bytes, path: str, overrides: Dict[str, Value]):
    """The problem's code object with each override assigned right after the file's own assignments
    (StageFailure `invalid_input`/`problem-override` for a name it never assigns at its top level)."""
    tree = ast.parse(source, filename=path)
    known = module_constants(tree)
    missing = [name for name in overrides if name not in known]
    if missing:
        constants = public_constants(known)
        raise StageFailure(
            "invalid_input",
            OVERRIDE_CHECK,
            f"--set {missing[0]}: the problem {path} has no module-level constant `{missing[0]}` "
            f"(its constants: {', '.join(constants) or 'none'})",
        )
    body: List[ast.stmt] = []
    for statement in tree.body:
        body.append(statement)
        for name in _assigned_names(statement):
            if name in overrides:
                body.append(_assignment(name, overrides[name], statement))
    tree.body = body
    ast.fix_missing_locations(tree)
    return compile(tree, path, "exec", dont_inherit=True)
