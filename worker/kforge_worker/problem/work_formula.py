"""A problem folder's `flops_formula` and `bytes_formula` (problem_folder.py), evaluated safely:
arithmetic on the shape's constants, nothing else is run."""

import ast
import math
from typing import Any, Dict

_OPERATORS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b,
}
_FUNCTIONS = {"max": max, "min": min, "ceil": math.ceil, "floor": math.floor, "log2": math.log2, "sqrt": math.sqrt}


def evaluate_formula(formula: str, names: Dict[str, Any]) -> float:
    """A flops or bytes formula (`2 * M * N * K`) evaluated with `names`: numbers, the four
    operations, //, %, **, parentheses and max/min/ceil/floor/log2/sqrt; nothing else is run.
    ValueError naming what it cannot evaluate."""
    try:
        tree = ast.parse(formula.strip(), mode="eval")
    except SyntaxError as error:
        raise ValueError(f"{formula!r} is not an arithmetic expression ({error.msg})") from None

    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise ValueError(
                    f"{formula!r} uses {node.id!r}, which is neither a constant of reference.py nor a shape key"
                )
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return -value(node.operand) if isinstance(node.op, ast.USub) else value(node.operand)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCTIONS
            and not node.keywords
        ):
            return _FUNCTIONS[node.func.id](*[value(argument) for argument in node.args])
        raise ValueError(f"{formula!r} holds {ast.dump(node)[:60]}, which is not arithmetic on the shape's constants")

    try:
        result = value(tree.body)
    except (ArithmeticError, TypeError) as error:
        raise ValueError(f"{formula!r} cannot be evaluated: {error}") from None
    if not isinstance(result, (int, float)) or not math.isfinite(result):
        raise ValueError(f"{formula!r} evaluates to {result!r}, not a finite number")
    return float(result)
