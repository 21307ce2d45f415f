"""The walk over ModelNew.forward and what it calls: torch-fallback, silent-fallback, result-cache,
phase-detect, precision and side-stream findings.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Mapping

from .names import _CACHE_DECORATORS, _OPERATORS
from .report import _Report, _at, _line
from .symbols import _Module, _decorator_names
from .context import _ClassInfo, _Ctx, _FunctionNode
from .inference import _infer_locals, _kind, _walk
from .call_rules import _CallRules
from .key_sources import _KeySources
from .state_rules import _StateRules


@dataclass
class _Job:
    function: _FunctionNode
    cls: _ClassInfo | None
    param_kinds: dict[str, str]
    in_handler: bool
    self_param: bool
    via: str


@dataclass
class _Scope:
    """What `_analyze` learns of one function before it checks its nodes."""

    handler_nodes: set[int]
    test_nodes: set[int]
    global_names: set[str]
    local_names: set[str]


class _ForwardWalker(_CallRules, _StateRules, _KeySources):
    """Follows forward into the methods and module functions it calls and checks each one (calls in
    call_rules.py, state kept between calls in state_rules.py, where keys come from in key_sources.py)."""

    def __init__(self, module: _Module, report: _Report, policy: Mapping[str, Any], classes: dict[str, _ClassInfo]):
        self.module = module
        self.report = report
        self.policy = policy
        self.classes = classes
        self.visited: set[tuple[int, bool]] = set()
        self.reachable: set[int] = set()
        self.kernel_calls = 0
        self.queue: list[_Job] = []
        self.ctx = _Ctx(module, None, None)
        self.taint: dict[str, str] = {}
        self.state_names: set[str] = set()
        #: State updated from itself in forward (`self.n += 1`, `self.mean = 0.9 * self.mean + …`):
        #: (the update, the state's text); judged once every reachable function is walked.
        self.counters: list[tuple[ast.AST, str]] = []
        #: Texts of every name, attribute and item read in a branch test or a comparison, with the
        #: state a local was assigned from (`n = self.calls; if n > 5:` tests `self.calls`).
        self.tested: set[str] = set()
        #: Every read of a name, attribute or item in the walked functions: (node id, its text).
        self.reads: list[tuple[int, str]] = []

    # -- driving ---------------------------------------------------------------------------

    def run(self, info: _ClassInfo) -> None:
        for name in ("forward", "__call__"):
            function = info.methods.get(name)
            if function is None:
                continue
            params = function.args.posonlyargs + function.args.args
            defaults = function.args.defaults
            kinds: dict[str, str] = {}
            first_default = len(params) - len(defaults)
            for index, param in enumerate(params[1:], start=1):
                if index >= first_default:
                    default_kind = _kind(defaults[index - first_default], _Ctx(self.module, None, None))
                    if default_kind:
                        kinds[param.arg] = default_kind
                else:
                    kinds[param.arg] = "tensor"
            self.queue.append(_Job(function, info, kinds, False, True, "forward"))
        while self.queue:
            self._analyze(self.queue.pop())
        self._judge_counters()

    def _enqueue(
        self,
        function: _FunctionNode,
        cls: _ClassInfo | None,
        call: ast.Call,
        ctx: _Ctx,
        skip_first: bool,
        in_handler: bool,
        self_param: bool,
    ) -> None:
        params = [arg.arg for arg in function.args.posonlyargs + function.args.args]
        if skip_first:
            params = params[1:]
        kinds: dict[str, str] = {}
        for param, argument in zip(params, call.args):
            kind = _kind(argument, ctx)
            if kind:
                kinds[param] = kind
        for keyword in call.keywords:
            kind = _kind(keyword.value, ctx) if keyword.arg else None
            if kind:
                kinds[keyword.arg] = kind
        name = getattr(function, "name", "<lambda>")
        self.queue.append(_Job(function, cls, kinds, in_handler, self_param, name))

    # -- one function ----------------------------------------------------------------------

    def _analyze(self, job: _Job) -> None:
        key = (id(job.function), job.in_handler)
        if key in self.visited:
            return
        self.visited.add(key)
        self.reachable.add(id(job.function))
        function = job.function
        args = function.args.posonlyargs + function.args.args
        self_name = args[0].arg if job.self_param and args else None
        ctx = _Ctx(module=self.module, cls=job.cls, self_name=self_name, kinds=dict(job.param_kinds))
        nodes = list(_walk(function))
        _infer_locals(function, ctx, nodes)
        self.ctx = ctx
        self._check_decorators(job, function)
        scope = self._scope(nodes, {arg.arg for arg in args})
        self.reads.extend(
            (id(node), ast.unparse(node))
            for node in nodes
            if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Load)
        )
        for node in nodes:  # a local assigned from state tests that state where the local is tested
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                if node.targets[0].id in self.tested:
                    self.tested.update(_read_texts(node.value))
        self.state_names = self._state_aliases(nodes, ctx)
        taint = self._taints(nodes, ctx)
        self.taint = taint
        for node in nodes:
            self._visit(node, job, ctx, scope, taint)

    def _scope(self, nodes: list[ast.AST], local_names: set[str]) -> _Scope:
        """The nodes in except handlers and branch tests, and the function's global and local names
        (`local_names` holds its parameters); records the texts read in tests in `self.tested`."""
        scope = _Scope(set(), set(), set(), local_names)
        for node in nodes:
            if isinstance(node, ast.ExceptHandler):
                for statement in node.body:
                    scope.handler_nodes.update(id(inner) for inner in ast.walk(statement))
            elif isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
                scope.test_nodes.update(id(inner) for inner in ast.walk(node.test))
                self.tested.update(_read_texts(node.test))
            elif isinstance(node, ast.Compare):
                self.tested.update(_read_texts(node))
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                scope.global_names.update(node.names)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local_names.add(node.id)
        local_names -= scope.global_names
        return scope

    def _visit(self, node: ast.AST, job: _Job, ctx: _Ctx, scope: _Scope, taint: dict[str, str]) -> None:
        """Checks one node of the walked function."""
        in_handler = job.in_handler or id(node) in scope.handler_nodes
        global_names, local_names = scope.global_names, scope.local_names
        if isinstance(node, ast.Call):
            self._call(node, ctx, in_handler, id(node) in scope.test_nodes)
        elif isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.MatMult):
                self._fallback(node, "the `@` operator to tensors", in_handler, "applies")
            elif "tensor" in (_kind(node.left, ctx), _kind(node.right, ctx)):
                self._fallback(
                    node, f"`{_OPERATORS.get(type(node.op), '?')}` on tensors with PyTorch", in_handler, "computes"
                )
        elif (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, (ast.USub, ast.Invert))
            and _kind(node.operand, ctx) == "tensor"
        ):
            self._fallback(node, "a unary operator on a tensor with PyTorch", in_handler, "computes")
        elif isinstance(node, ast.Compare):
            self._compare(node, ctx, in_handler, taint, local_names)
        elif isinstance(node, ast.AugAssign):
            self._augassign(node, ctx, in_handler, global_names, local_names)
        elif isinstance(node, ast.Assign):
            self._assign(node, ctx, taint, global_names, local_names)
        elif isinstance(node, ast.Subscript):
            if self._tainted(node.slice, taint) and self._is_cache(node.value, ctx, local_names):
                self._cache(
                    node,
                    f"looks up `{ast.unparse(node)}` keyed on " f"{self._taint_label(node.slice, taint)}",
                    node.slice,
                )
        elif isinstance(node, ast.Return) and node.value is not None and job.via == "forward":
            if _kind(node.value, ctx) == "cached":
                value = node.value
                keys = (
                    [value.slice]
                    if isinstance(value, ast.Subscript)
                    else list(value.args[:1])
                    if isinstance(value, ast.Call)
                    else []
                )
                self._cache(node, f"returns `{ast.unparse(value)}`, a value read from a cache", *keys)

    def _check_decorators(self, job: _Job, function: _FunctionNode) -> None:
        for qual in _decorator_names(function, self.module):
            if qual in _CACHE_DECORATORS and ("tensor" in job.param_kinds.values() or job.via == "forward"):
                self.report.add(
                    "result-cache",
                    f"{getattr(function, 'name', 'a function')} is wrapped in {qual}{_at(function)} "
                    f"and called from forward with tensors, which it keys on their identity: judged at "
                    f"run time (timed calls refill the same tensors with new contents and their sampled "
                    f"outputs must match)",
                    _line(function),
                    "note",
                )


def _read_texts(node: ast.AST) -> set[str]:
    """The source text of every name, attribute and item read in `node` (`self.calls`, `_N`, `s[0]`)."""
    return {
        ast.unparse(inner) for inner in ast.walk(node) if isinstance(inner, (ast.Name, ast.Attribute, ast.Subscript))
    }
