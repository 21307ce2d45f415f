"""The walk over ModelNew.forward and what it calls: torch-fallback, silent-fallback, result-cache,
phase-detect, precision and side-stream findings.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Mapping

from .names import (
    COMPUTE_TENSOR_METHODS,
    _BUILTIN_NAMES,
    _CACHE_DECORATORS,
    _CLOCKS,
    _IDENTITY_METHODS,
    _KEY_BUILDERS,
    _PYTHON_CONTAINER_TYPES,
    _SAMPLING_METHODS,
)
from .report import _Report, _at, _line
from .symbols import _Module, _decorator_names
from .inference import (
    _ClassInfo,
    _Ctx,
    _FunctionNode,
    _class_info,
    _infer_locals,
    _kind,
    _label,
    _torch_verdict,
    _walk,
)


_OPERATORS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.MatMult: "@",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
}


#: How the labels of keys made from the input's values begin (`_sources`); every other label is an
#: identity (an address, an id, a version counter).
_VALUE_LABELS = ("sampled values", "a digest of")


@dataclass
class _Job:
    function: _FunctionNode
    cls: _ClassInfo | None
    param_kinds: dict[str, str]
    in_handler: bool
    self_param: bool
    via: str


class _ForwardWalker:
    """Follows forward into the methods and module functions it calls and checks each one."""

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

    def _judge_counters(self) -> None:
        """State that forward updates from itself is a rejection when it can tell the timed calls
        from the checked ones: a counter (updated by constants only: `self.n += 1`) that anything
        reads, or any such state that a branch or a comparison reads. State only updated, or a
        running statistic read as data (the running mean and variance a BatchNorm keeps in
        training), is a note; the run-time checks (`timed-output`, `stale-output`) judge the outputs."""
        for node, text in self.counters:
            update = ast.unparse(node)
            inside = {id(inner) for inner in ast.walk(node)}
            read = any(seen == text and ident not in inside for ident, seen in self.reads)
            if text in self.tested or (_counts_by_constants(node, text) and read):
                self._phase(node, f"keeps a call counter (`{update}`) and reads it")
            else:
                self.report.add(
                    "phase-detect",
                    f"forward updates `{text}` on every call (`{update}`){_at(node)}; nothing chooses its work "
                    f"by it, so it is a note, not a rejection: the timed calls' outputs are judged",
                    _line(node),
                    severity="note",
                )

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

    # -- reporting -------------------------------------------------------------------------

    def _fallback(
        self,
        node: ast.AST,
        what: str,
        in_handler: bool,
        verb: str = "calls",
        advice: str = "move the work into the kernel",
        definitive: bool = False,
    ) -> None:
        """``what`` names the PyTorch compute: forward {verb} {what} (line n): ... A note unless
        `definitive` (report.py): whether PyTorch did the work is decided from what ran."""
        if in_handler:
            self.report.add(
                "silent-fallback",
                f"forward falls back to PyTorch in an except handler: it {verb} {what}{_at(node)}; "
                f"a kernel failure must surface as an error, not as PyTorch's answer, so remove "
                f"the fallback (rejected if the fallback runs)",
                _line(node),
                definitive=definitive,
            )
        elif definitive:
            self.report.add(
                "torch-fallback", f"forward {verb} {what}{_at(node)}: {advice}", _line(node), definitive=True
            )
        else:
            self.report.add(
                "torch-fallback",
                f"forward {verb} {what}{_at(node)}: PyTorch compute in forward; under the policy "
                f"`{self.policy['name']}` the operators that run decide (reported under "
                f"kernelbench, rejected under own-kernels and strict)",
                _line(node),
            )

    def _phase(self, node: ast.AST, what: str) -> None:
        self.report.add(
            "phase-detect",
            f"forward {what}{_at(node)}: timed calls must do the same work as checked calls; "
            f"remove the state that tells them apart",
            _line(node),
        )

    def _cache(self, node: ast.AST, what: str, *keys: ast.AST) -> None:
        """A cache in forward. Keyed on values (sampled elements, a digest of the contents) it is a
        rejection: it returns a stored answer whenever contents repeat, and that answer is right, so
        no run-time check can tell it from computing. Keyed on an input's identity (data_ptr, id,
        hash of a tensor; a CUDA graph, a plan or a schedule per buffer) or on nothing the guard can
        see, it is a note: timed calls refill the same buffers with new contents and their sampled
        outputs are judged (`timed-output`), so a stale answer is rejected at run time."""
        if any(self._value_keyed(key) for key in keys):
            self.report.add(
                "result-cache",
                f"forward {what}{_at(node)}: a cache keyed on the input's values returns a stored answer "
                f"whenever the contents repeat, which no run-time check can tell from computing it; "
                f"outputs must be computed from the inputs on every call, so remove the cache",
                _line(node),
            )
        else:
            self.report.add(
                "result-cache",
                f"forward {what}{_at(node)}: a cache keyed on an input's address or identity is judged at "
                f"run time: timed calls refill the same buffers with new contents and their sampled "
                f"outputs must match (a stale answer is rejected as `timed-output`)",
                _line(node),
                "note",
            )

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
        handler_nodes: set[int] = set()
        test_nodes: set[int] = set()
        global_names: set[str] = set()
        local_names = {arg.arg for arg in args}
        for node in nodes:
            if isinstance(node, ast.ExceptHandler):
                for statement in node.body:
                    handler_nodes.update(id(inner) for inner in ast.walk(statement))
            elif isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
                test_nodes.update(id(inner) for inner in ast.walk(node.test))
                self.tested.update(_read_texts(node.test))
            elif isinstance(node, ast.Compare):
                self.tested.update(_read_texts(node))
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                global_names.update(node.names)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local_names.add(node.id)
        local_names -= global_names
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
            in_handler = job.in_handler or id(node) in handler_nodes
            if isinstance(node, ast.Call):
                self._call(node, ctx, in_handler, id(node) in test_nodes)
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

    def _call(self, node: ast.Call, ctx: _Ctx, in_handler: bool, in_test: bool) -> None:
        module = self.module
        func = node.func
        qual = ctx.qual(func)
        if qual and isinstance(func, ast.Name) and func.id in module.reference_names:
            qual = None  # the problem's Model, imported: judged below as the reference
        if qual:
            verdict = _torch_verdict(qual, self.policy)
            if verdict == "compute":
                self._fallback(node, _label(func, qual), in_handler)
            elif verdict == "nn-module":
                self._fallback(node, f"{_label(func, qual)}, a torch.nn module built in forward", in_handler)
            elif verdict == "custom-op":
                self.kernel_calls += 1
            elif verdict == "phase":
                self._phase(node, f"checks {qual}()")
            elif qual in _CLOCKS:
                self._phase(node, f"reads the clock with {qual}()")
            elif qual in ("sys._getframe", "inspect.stack", "inspect.currentframe") and in_test:
                self._phase(node, f"branches on {qual}()")
            elif qual.startswith("operator.") or qual in (
                "builtins.sum",
                "builtins.max",
                "builtins.min",
                "builtins.abs",
                "builtins.pow",
                "builtins.round",
                "builtins.divmod",
                "functools.reduce",
            ):
                if any(_kind(argument, ctx) == "tensor" for argument in node.args):
                    self._fallback(node, f"{ast.unparse(func)}() on tensors", in_handler)
            elif qual == "builtins.next" and node.args and _kind(node.args[0], ctx) == "counter":
                self._phase(node, "counts its calls with next()")
            return
        if isinstance(func, ast.Name):
            kind = _kind(func, ctx)
            if func.id in module.functions and func.id not in module.jit_kernels:
                self._enqueue(module.functions[func.id], None, node, ctx, False, in_handler, False)
            elif func.id in module.jit_kernels or kind in ("kernel", "ext"):
                self.kernel_calls += 1
            elif kind == "torch-module":
                self._fallback(node, f"the torch.nn module `{func.id}`", in_handler)
            elif func.id in module.reference_names:
                self._fallback(
                    node,
                    "the reference Model",
                    in_handler,
                    advice="the candidate must compute the result itself",
                    definitive=True,
                )
            return
        if isinstance(func, ast.Subscript):
            if _kind(func.value, ctx) == "jit-kernel":
                self.kernel_calls += 1
                return
            held = self._torch_in_container(func.value, ctx)
            if held:
                self._fallback(node, f"{held} through `{ast.unparse(func)}`", in_handler)
            return
        if not isinstance(func, ast.Attribute):
            return
        method = func.attr
        receiver = func.value
        if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super":
            if method in ("forward", "__call__"):
                self._fallback(
                    node,
                    "super().forward, the parent class's forward",
                    in_handler,
                    advice="the candidate must compute the result itself",
                )
            return
        receiver_kind = _kind(receiver, ctx)
        if receiver_kind == "self":
            self._self_call(node, method, ctx, in_handler)
            return
        if receiver_kind in ("torch-module", "torch-module-list") and method in ("forward", "__call__"):
            self._fallback(node, f"the forward of the torch.nn module `{ast.unparse(receiver)}`", in_handler)
        elif receiver_kind in ("reference", "reference-class") and method in ("forward", "__call__"):
            self._fallback(
                node,
                f"the reference Model ({ast.unparse(func)})",
                in_handler,
                advice="the candidate must compute the result itself",
                definitive=True,
            )
        elif receiver_kind in ("ext", "kernel", "jit-kernel"):
            self.kernel_calls += 1
        elif receiver_kind and receiver_kind.startswith("instance:") and method in ("forward", "__call__"):
            self._enqueue_class_method(receiver_kind.split(":", 1)[1], "forward", node, ctx, in_handler, True)
        elif receiver_kind and receiver_kind.startswith("class:"):
            if method in ("apply", "forward"):
                self._enqueue_class_method(receiver_kind.split(":", 1)[1], "forward", node, ctx, in_handler, False)
        elif receiver_kind in _PYTHON_CONTAINER_TYPES or receiver_kind in ("stream", "counter", "cached"):
            if (
                method in ("get", "setdefault", "pop", "__contains__", "__getitem__")
                and node.args
                and self._tainted(node.args[0], self.taint)
            ):
                self._cache(
                    node,
                    f"looks up `{ast.unparse(node)}` keyed on " f"{self._taint_label(node.args[0], self.taint)}",
                    node.args[0],
                )
        elif receiver_kind is None and method in module.kernel_names:
            self.kernel_calls += 1
        elif method == "is_inference":
            self._phase(node, "checks Tensor.is_inference()")
        elif method in self.policy["glue_tensor_methods"]:
            return
        elif method in COMPUTE_TENSOR_METHODS:
            self._fallback(node, f"the tensor method .{method}() (`{ast.unparse(func)}`)", in_handler)

    def _torch_in_container(self, container: ast.AST, ctx: _Ctx) -> str | None:
        """A torch compute function reachable through a subscript (``OPS[0]``, ``F.__dict__["relu"]``)."""
        qual = ctx.qual(container) or ""
        if qual.endswith(".__dict__") and qual.startswith("torch"):
            return f"a function from {qual}"
        values: list[ast.AST] = []
        if isinstance(container, ast.Name):
            values = [value for _, value in self.module.string_defs.get(container.id, [])]
        elif isinstance(container, (ast.List, ast.Tuple, ast.Dict)):
            values = [container]
        for value in values:
            items = value.values if isinstance(value, ast.Dict) else getattr(value, "elts", [])
            for item in items:
                item_qual = ctx.qual(item) if item is not None else None
                if item_qual and _torch_verdict(item_qual, self.policy) in ("compute", "nn-module"):
                    return item_qual
        return None

    def _self_call(self, node: ast.Call, name: str, ctx: _Ctx, in_handler: bool) -> None:
        info = ctx.cls
        if info is None:
            return
        kind = info.attr_kinds.get(name)
        label = f"self.{name}"
        if kind in ("torch-module", "torch-module-list"):
            self._fallback(
                node,
                f"the torch.nn module {label} ({info.attr_quals.get(name, 'torch.nn')})",
                in_handler,
                advice="its forward is PyTorch's, so use its weights in your own kernel",
            )
        elif kind == "reference":
            self._fallback(
                node,
                f"the reference Model held in {label}",
                in_handler,
                advice="the candidate must compute the result itself",
                definitive=True,
            )
        elif kind in ("kernel", "ext"):
            self.kernel_calls += 1
        elif kind and kind.startswith("instance:"):
            self._enqueue_class_method(kind.split(":", 1)[1], "forward", node, ctx, in_handler, True)
        elif name in info.methods:
            self._enqueue(info.methods[name], info, node, ctx, False, in_handler, True)

    def _enqueue_class_method(
        self, class_name: str, method: str, node: ast.Call, ctx: _Ctx, in_handler: bool, bound: bool
    ) -> None:
        info = _class_info(self.module, class_name, self.classes)
        if info is None or method not in info.methods:
            return
        function = info.methods[method]
        is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
        # autograd.Function.forward(ctx, ...) is static: skip ctx; bound methods skip self.
        self._enqueue(function, info, node, ctx, True, in_handler, bound and not is_static)

    def _compare(
        self, node: ast.Compare, ctx: _Ctx, in_handler: bool, taint: dict[str, str], local_names: set[str]
    ) -> None:
        operands = [node.left, *node.comparators]
        value_ops = [op for op in node.ops if not isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn))]
        if value_ops and any(_kind(operand, ctx) == "tensor" for operand in operands):
            self._fallback(node, "a comparison of tensors with PyTorch", in_handler, "computes")
        if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and self._tainted(node.left, taint):
            self._cache(
                node,
                f"tests `{ast.unparse(node)}` against stored keys made from " f"{self._taint_label(node.left, taint)}",
                node.left,
            )
        elif any(isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)) for op in node.ops):
            tainted = [operand for operand in operands if self._tainted(operand, taint)]
            stored = [operand for operand in operands if self._is_state(operand, ctx, local_names)]
            if tainted and stored:
                self._cache(
                    node,
                    f"compares {self._taint_label(tainted[0], taint)} with the stored "
                    f"`{ast.unparse(stored[0])}` to recognise a repeated input",
                    *tainted,
                )

    def _augassign(
        self, node: ast.AugAssign, ctx: _Ctx, in_handler: bool, global_names: set[str], local_names: set[str]
    ) -> None:
        target = node.target
        if _kind(target, ctx) == "tensor":
            self._fallback(
                node, f"`{_OPERATORS.get(type(node.op), '?')}=` on a tensor with PyTorch", in_handler, "computes"
            )
        elif self._is_state(target, ctx, local_names) or (isinstance(target, ast.Name) and target.id in global_names):
            self.counters.append((node, ast.unparse(target)))

    def _assign(
        self, node: ast.Assign, ctx: _Ctx, taint: dict[str, str], global_names: set[str], local_names: set[str]
    ) -> None:
        for target in node.targets:
            state = self._is_state(target, ctx, local_names) or (
                isinstance(target, ast.Name) and target.id in global_names
            )
            if not state:
                continue
            text = ast.unparse(target)
            if isinstance(node.value, ast.BinOp) and any(
                ast.unparse(inner) == text for inner in ast.walk(node.value) if inner is not node.value
            ):
                self.counters.append((node, text))
            elif self._tainted(node.value, taint, identity_only=True):
                self._cache(
                    node,
                    f"stores {self._taint_label(node.value, taint)} in `{text}` to recognise "
                    f"the input on a later call",
                )

    # -- state, caches and taint -----------------------------------------------------------

    def _is_state(self, node: ast.AST, ctx: _Ctx, local_names: set[str]) -> bool:
        """An expression that survives between calls: self.x, a module global, or an item of one."""
        while isinstance(node, ast.Subscript):
            node = node.value
        if isinstance(node, ast.Attribute):
            root = node
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id == ctx.self_name:
                return True
            return (
                isinstance(root, ast.Name)
                and root.id not in local_names
                and root.id not in self.module.aliases
                and root.id != "self"
            )
        if isinstance(node, ast.Name):
            return (
                node.id not in local_names
                and node.id not in self.module.aliases
                and node.id not in self.module.functions
                and node.id not in self.module.classes
                and node.id not in _BUILTIN_NAMES
                and node.id not in ctx.kinds
            )
        return False

    def _is_cache(self, node: ast.AST, ctx: _Ctx, local_names: set[str]) -> bool:
        kind = _kind(node, ctx)
        if kind in ("tensor", "list", "str"):
            return False
        return kind in ("container", "cached") or self._is_state(node, ctx, local_names)

    def _taints(self, nodes: list[ast.AST], ctx: _Ctx) -> dict[str, str]:
        """Local names holding an input's identity (data_ptr, id, hash) or values (item, tolist, a
        digest of the contents); a name holding both is bound to its values' label."""
        taint: dict[str, str] = {}

        def bind(target: ast.AST, source: str) -> None:
            if isinstance(target, ast.Name):
                taint[target.id] = source
            elif isinstance(target, (ast.Tuple, ast.List)):
                for element in target.elts:
                    bind(element, source)

        for _ in range(2):
            for node in nodes:
                if isinstance(node, ast.Assign):
                    source = self._source(node.value, taint, ctx)
                    if source:
                        for target in node.targets:
                            bind(target, source)
        return taint

    def _source(self, node: ast.AST, taint: Mapping[str, str], ctx: _Ctx) -> str | None:
        """The label of what a key-like expression is made from: its values where any part of it
        is (sampled elements, a digest), otherwise its identity; None when neither."""
        labels = self._sources(node, taint, ctx)
        values = [label for label in labels if label.startswith(_VALUE_LABELS)]
        return (values or labels or [None])[0]

    def _sources(self, node: ast.AST, taint: Mapping[str, str], ctx: _Ctx, depth: int = 0) -> list[str]:
        """Where a key-like expression gets an input's identity or values from, every source.

        Taint flows through key-building (tuples, f-strings, str/tuple/hash, arithmetic), not
        through computation: a tensor built from ``x.tolist()`` is an output, not a key.
        """
        if depth > 30:
            return []
        if isinstance(node, ast.Call):
            qual = ctx.qual(node.func) or ""
            method = node.func.attr if isinstance(node.func, ast.Attribute) else None
            if (
                qual == "builtins.id"
                or (qual == "builtins.hash" and node.args and _kind(node.args[0], ctx) == "tensor")
                or method in _IDENTITY_METHODS
            ):
                # hash() of a tensor is its id(); hash() of anything else is keyed on what it hashes
                subject = node.func.value if method in _IDENTITY_METHODS else (node.args[0] if node.args else None)
                if subject is not None and self._module_state(subject, ctx):
                    return []  # keyed on a parameter or buffer, not on an input: a packed weight
                return [f"`{ast.unparse(node)}`"]
            if method in _SAMPLING_METHODS and _kind(node.func.value, ctx) == "tensor":
                if self._module_state(node.func.value, ctx):
                    return []
                return [f"sampled values (`{ast.unparse(node)}`)"]
            digest = qual.startswith(("hashlib.", "zlib.crc32", "zlib.adler32"))
            if (
                digest
                or qual in _KEY_BUILDERS
                or qual == "builtins.hash"
                or method in ("hexdigest", "digest", "encode", "format", "join")
            ):
                parts = list(node.args) + [keyword.value for keyword in node.keywords]
                if method:
                    parts.append(node.func.value)
                found = [label for part in parts for label in self._sources(part, taint, ctx, depth + 1)]
                if digest and not found and any(self._reads_tensor(part, ctx) for part in parts):
                    # a digest of bytes read from the tensor (`hashlib.sha1(x.numpy().tobytes())`)
                    return [f"a digest of the contents (`{ast.unparse(node)}`)"]
                return found
            return []
        if isinstance(node, ast.Attribute):
            if node.attr in ("_version", "_cdata"):
                return [] if self._module_state(node.value, ctx) else [f"`{ast.unparse(node)}`"]
            return self._sources(node.value, taint, ctx, depth + 1)
        if isinstance(node, ast.Name):
            return [taint[node.id]] if node.id in taint else []
        if isinstance(
            node,
            (
                ast.Tuple,
                ast.List,
                ast.Set,
                ast.BinOp,
                ast.JoinedStr,
                ast.FormattedValue,
                ast.Subscript,
                ast.Starred,
                ast.BoolOp,
                ast.UnaryOp,
            ),
        ):
            return [
                label for child in ast.iter_child_nodes(node) for label in self._sources(child, taint, ctx, depth + 1)
            ]
        return []

    def _reads_tensor(self, node: ast.AST, ctx: _Ctx) -> bool:
        """`node` reads an input tensor (its bytes, its numpy view): a tensor that is not the module's own."""
        return any(
            isinstance(inner, ast.Name) and _kind(inner, ctx) == "tensor" and not self._module_state(inner, ctx)
            for inner in ast.walk(node)
        )

    def _value_keyed(self, node: ast.AST) -> bool:
        """The key is made, at least in part, from the input's values."""
        return any(label.startswith(_VALUE_LABELS) for label in self._sources(node, self.taint, self.ctx))

    def _module_state(self, node: ast.AST, ctx: _Ctx) -> bool:
        """`self.weight`, `self.conv.weight`, `self.params[0]`, or a local name bound to one
        (`weight = self.linear.weight`): the module's own parameters and buffers (state keyed on
        them is a weight packed once, not an answer cached for an input)."""
        while isinstance(node, (ast.Attribute, ast.Subscript)) or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("detach", "contiguous", "t", "view", "reshape")
        ):
            node = node.func.value if isinstance(node, ast.Call) else node.value
        if not isinstance(node, ast.Name):
            return False
        return (ctx.self_name is not None and node.id == ctx.self_name) or node.id in self.state_names

    def _state_aliases(self, nodes: list[ast.AST], ctx: _Ctx) -> set[str]:
        """Local names assigned only from the module's own state (see `_module_state`)."""
        self.state_names = set()
        sources: dict[str, list[ast.AST]] = {}
        for node in nodes:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        sources.setdefault(target.id, []).append(node.value)
        for _ in range(2):
            for name, values in sources.items():
                if all(self._module_state(value, ctx) for value in values):
                    self.state_names.add(name)
        return self.state_names

    def _tainted(self, node: ast.AST, taint: Mapping[str, str], identity_only: bool = False) -> bool:
        label = self._source(node, taint, self.ctx)
        return label is not None and not (identity_only and label.startswith(_VALUE_LABELS))

    def _taint_label(self, node: ast.AST, taint: Mapping[str, str]) -> str:
        return self._source(node, taint, self.ctx) or "the input's identity"


def _read_texts(node: ast.AST) -> set[str]:
    """The source text of every name, attribute and item read in `node` (`self.calls`, `_N`, `s[0]`)."""
    return {
        ast.unparse(inner) for inner in ast.walk(node) if isinstance(inner, (ast.Name, ast.Attribute, ast.Subscript))
    }


def _counts_by_constants(update: ast.AST, text: str) -> bool:
    """`update` changes the state `text` by number constants only (`n += 1`, `n = (n + 1) % 4`): a counter."""

    def by_constants(node: ast.AST) -> bool:
        if ast.unparse(node) == text:
            return True
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        if isinstance(node, ast.BinOp):
            return by_constants(node.left) and by_constants(node.right)
        if isinstance(node, ast.UnaryOp):
            return by_constants(node.operand)
        return False

    value = getattr(update, "value", None)
    return value is not None and by_constants(value)
