"""`python3 -m kforge_worker constants PROBLEM [...]`: the module-level constants of problem files,
read from their source without running anything of them (no torch import: about 0.05 s).

Prints one JSON object on stdout, `{"problems": [...]}`, one entry per path in the order given:
`{"problem": PATH, "assigned": [...], "constants": [...]}`, where `assigned` holds every name the
file assigns at its top level (what `--set` may override: overrides.py) and `constants` those of
them named to a person (overrides.public_constants); or `{"problem": PATH, "error": MESSAGE}` for a
file that cannot be read or parsed (the evaluation reports it itself, as `invalid_input`). Exits 0;
2 when the command is misused.
"""

import ast
import json
import sys
from typing import List

from ..problem.overrides import module_constants, public_constants


def constants_of(path: str) -> dict:
    """The entry for one problem file (see the module docs)."""
    try:
        with open(path, "rb") as source_file:
            tree = ast.parse(source_file.read(), filename=path)
    except OSError as error:
        return {"problem": path, "error": f"the problem file {path} cannot be read: {error.strerror or error}"}
    except (SyntaxError, ValueError) as error:
        return {"problem": path, "error": f"the problem file {path} is not Python that parses: {error}"}
    assigned = module_constants(tree)
    return {"problem": path, "assigned": assigned, "constants": public_constants(assigned)}


def main(argv: List[str]) -> int:
    if not argv or any(argument.startswith("-") for argument in argv):
        print("usage: python3 -m kforge_worker constants PROBLEM [PROBLEM ...]", file=sys.stderr)
        return 2
    print(json.dumps({"problems": [constants_of(path) for path in argv]}))
    return 0
