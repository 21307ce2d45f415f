"""Calls in the walked functions: what forward calls (PyTorch compute, the reference, a kernel,
another method to walk), for _ForwardWalker (`torch-fallback`, `silent-fallback`, `phase-detect`)."""

from __future__ import annotations

import ast

from .compute_names import COMPUTE_TENSOR_METHODS, _CLOCKS, _PYTHON_CONTAINER_TYPES
from .report import _at, _line
from .context import _Ctx
from .inference import _kind
from .module_table import _class_info
from .torch_verdict import _label, _torch_verdict


class _CallRules:
    """Rules on calls, and the findings of PyTorch in forward (a mixin of _ForwardWalker)."""

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

    def _call(self, node: ast.Call, ctx: _Ctx, in_handler: bool, in_test: bool) -> None:
        module = self.module
        func = node.func
        qual = ctx.qual(func)
        if qual and isinstance(func, ast.Name) and func.id in module.reference_names:
            qual = None  # the problem's Model, imported: judged below as the reference
        if qual:
            self._qualified_call(node, qual, ctx, in_handler, in_test)
        elif isinstance(func, ast.Name):
            self._name_call(node, func, ctx, in_handler)
        elif isinstance(func, ast.Subscript):
            if _kind(func.value, ctx) == "jit-kernel":
                self.kernel_calls += 1
                return
            held = self._torch_in_container(func.value, ctx)
            if held:
                self._fallback(node, f"{held} through `{ast.unparse(func)}`", in_handler)
        elif isinstance(func, ast.Attribute):
            self._method_call(node, func, ctx, in_handler)

    def _qualified_call(self, node: ast.Call, qual: str, ctx: _Ctx, in_handler: bool, in_test: bool) -> None:
        """A call of a name the module imported (`torch.relu`, `time.perf_counter`, `sum`)."""
        func = node.func
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

    def _name_call(self, node: ast.Call, func: ast.Name, ctx: _Ctx, in_handler: bool) -> None:
        """A call of a name the module defines or binds (a function, a kernel, a module instance)."""
        module = self.module
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

    def _method_call(self, node: ast.Call, func: ast.Attribute, ctx: _Ctx, in_handler: bool) -> None:
        """A call of a method (`x.relu()`, `self.conv(x)`, `ext.run(x)`, `cache.get(key)`)."""
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
        elif receiver_kind is None and method in self.module.kernel_names:
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
