"""Whose computation is the output? A record, kept by the dispatch trace, of which tensors hold
nothing but PyTorch's own computation from the call's inputs.

Used on the cpu backend, where no kernel launches can be seen: there an extension function that
only hands its input to an ATen operator and returns the operator's answer (`return
torch::softmax(x, 1)`) has run, but no code of the candidate's own did any of the work. The
dispatch trace (dispatch_trace.py) reports every operator of the traced call to :meth:`before` and
:meth:`after`; each tensor's storage is then marked

- `SOURCE`: an input, a parameter or a buffer (marked when the call starts), or a copy of one
  (`clone`, `_to_copy`, `copy_`, `index`, …);
- `TORCH`: the result of a PyTorch compute operator all of whose tensor arguments were `SOURCE` or
  `TORCH` (or a copy of such a result);
- nothing: an allocation (`empty`, `zeros`, `torch.tensor(list)`), the result of the candidate's
  own custom operator, or anything computed from an unmarked tensor.

Code that writes a tensor without the dispatcher (the extension's C++ loops, numpy views) is
invisible, so each mark carries a fingerprint of its storage (the bytes of up to SAMPLE_POINTS
evenly spaced elements): a mark whose storage no longer matches its fingerprint is dropped when it
is next read. :meth:`output_is_torch` then says whether every output leaf is still PyTorch's
computation, and which operators produced it. Views share their base's storage and need no mark
of their own; tensors without elements (`torch.Tensor()`, `torch.empty(0)`) carry no data and are
ignored.
"""

from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

import torch

SOURCE = "source"
TORCH = "torch"
#: Elements read for a storage's fingerprint.
SAMPLE_POINTS = 64
_MAX_DEPTH = 4
#: Glue operators whose results do not carry their tensor arguments' values.
#: Operators whose written argument is overwritten whole (its old contents are not read).
_OVERWRITES = frozenset({"copy_", "_copy_from", "_copy_from_and_resize"})
_FRESH_GLUE = frozenset(
    {
        "empty",
        "empty_like",
        "empty_strided",
        "new_empty",
        "new_empty_strided",
        "zeros",
        "zeros_like",
        "new_zeros",
        "ones",
        "ones_like",
        "new_ones",
        "full",
        "full_like",
        "new_full",
        "fill_",
        "zero_",
        "resize_",
        "resize_as_",
        "set_",
        "arange",
        "scalar_tensor",
        "lift",
        "lift_fresh",
        "lift_fresh_copy",
    }
)


@dataclass
class Mark:
    kind: str
    fingerprint: Optional[torch.Tensor]
    producer: Optional[str] = None


def _tensors(value: Any, depth: int = 0) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif depth < _MAX_DEPTH and isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item, depth + 1)
    elif depth < _MAX_DEPTH and isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item, depth + 1)


def _storage(tensor: torch.Tensor) -> Tuple[int, int]:
    """(address, bytes) of the tensor's storage."""
    if hasattr(tensor, "untyped_storage"):
        storage = tensor.untyped_storage()
        return storage.data_ptr(), storage.nbytes()
    storage = tensor.storage()
    return storage.data_ptr(), storage.nbytes()


def _key(tensor: torch.Tensor) -> Optional[Tuple[str, int]]:
    if tensor.numel() == 0 or tensor.device.type == "meta":
        return None
    return tensor.device.type, _storage(tensor)[0]


def fingerprint(tensor: torch.Tensor) -> Optional[torch.Tensor]:
    """Bytes of up to SAMPLE_POINTS evenly spaced elements of the tensor's whole storage."""
    size = tensor.element_size()
    elements = _storage(tensor)[1] // size
    if elements == 0:
        return None
    flat = tensor.detach().as_strided((elements,), (1,), 0)
    points = torch.linspace(0, elements - 1, steps=min(elements, SAMPLE_POINTS), device=tensor.device).long()
    sample = flat[points].contiguous()
    if sample.dtype == torch.bool:
        sample = sample.to(torch.uint8)
    return sample.view(torch.uint8).clone()


def _written(func: Any) -> List[int]:
    """Indexes of the arguments an operator writes (schema alias info `is_write`)."""
    schema = getattr(func, "_schema", None)
    if schema is None:
        return []
    return [
        index
        for index, argument in enumerate(schema.arguments)
        if argument.alias_info is not None and argument.alias_info.is_write
    ]


def is_view(func: Any) -> bool:
    """True for an operator whose results alias an argument without writing it (`view`, `unfold`,
    `expand`, `as_strided`, `t`): it moves no data, so it is never compute."""
    schema = getattr(func, "_schema", None)
    if schema is None or not schema.returns:
        return False
    returns = [item.alias_info for item in schema.returns]
    return all(info is not None and not info.is_write for info in returns) and not _written(func)


class Provenance:
    """See the module docs. `sources`: the call's inputs and the model's parameters and buffers."""

    def __init__(self, sources: Iterable[torch.Tensor]):
        self.marks: Dict[Tuple[str, int], Mark] = {}
        for tensor in sources:
            self._set(tensor, SOURCE, None)

    def _set(self, tensor: torch.Tensor, kind: Optional[str], producer: Optional[str]) -> None:
        key = _key(tensor)
        if key is None:
            return
        if kind is None:
            self.marks.pop(key, None)
        else:
            self.marks[key] = Mark(kind, fingerprint(tensor), producer)

    def state(self, tensor: torch.Tensor) -> Optional[Mark]:
        """The tensor's mark, if its storage still holds what was marked."""
        key = _key(tensor)
        mark = self.marks.get(key) if key is not None else None
        if mark is None:
            return None
        current = fingerprint(tensor)
        if mark.fingerprint is None or current is None or not torch.equal(mark.fingerprint, current):
            del self.marks[key]
            return None
        return mark

    def before(self, func: Any, args: Any, kwargs: Any) -> Optional[str]:
        """Before an operator runs: SOURCE if every tensor argument with elements that it reads is
        SOURCE, TORCH if each is SOURCE or TORCH (at least one TORCH), None otherwise or without such
        arguments. A destination it overwrites whole (`copy_`'s first argument, an `out=`) is not read."""
        kinds = []
        schema = getattr(func, "_schema", None)
        skipped = {
            argument.name
            for argument in (schema.arguments if schema is not None else [])
            if argument.alias_info is not None
            and argument.alias_info.is_write
            and (argument.kwarg_only or str(schema.name).split("::")[-1] in _OVERWRITES)
        }
        names = [argument.name for argument in schema.arguments] if schema is not None else []
        read = [value for index, value in enumerate(args) if index >= len(names) or names[index] not in skipped]
        read += [value for name, value in (kwargs or {}).items() if name not in skipped]
        for tensor in _tensors(read):
            if tensor.numel() == 0:
                continue
            mark = self.state(tensor)
            if mark is None:
                return None
            kinds.append(mark.kind)
        if not kinds:
            return None
        return TORCH if TORCH in kinds else SOURCE

    def after(
        self, func: Any, name: str, kind: str, args: Any, kwargs: Any, result: Any, inputs: Optional[str]
    ) -> None:
        """After an operator ran: marks what it wrote and returned (see the module docs); `kind` is
        dispatch_ops' class (`compute`, `glue`, `own`), `inputs` what :meth:`before` returned."""
        if is_view(func):
            return
        base = name.split("::", 1)[-1].split(".")[0]
        if kind == "compute":
            mark, producer = (TORCH if inputs is not None else None), name
        elif kind == "glue" and base not in _FRESH_GLUE:
            mark, producer = inputs, None
        else:
            mark, producer = None, None
        targets = list(_tensors(result))
        written = _written(func)
        positional = list(args)
        targets += [
            positional[index]
            for index in written
            if index < len(positional) and isinstance(positional[index], torch.Tensor)
        ]
        for tensor in targets:
            previous = self.marks.get(_key(tensor)) if _key(tensor) is not None else None
            origin = producer or (previous.producer if previous is not None and mark == TORCH else None)
            if mark == TORCH and origin is None:
                origin = self._producer(args, kwargs)
            self._set(tensor, mark, origin)

    def _producer(self, args: Any, kwargs: Any) -> Optional[str]:
        for tensor in _tensors((args, kwargs or {})):
            key = _key(tensor)
            mark = self.marks.get(key) if key is not None else None
            if mark is not None and mark.producer:
                return mark.producer
        return None

    def output_is_torch(self, output: Any) -> Optional[List[str]]:
        """The producing operators when every output leaf with elements is PyTorch's computation
        from the inputs (TORCH), else None."""
        producers: List[str] = []
        leaves = [tensor for tensor in _tensors(output) if tensor.numel() > 0]
        if not leaves:
            return None
        for tensor in leaves:
            mark = self.state(tensor)
            if mark is None or mark.kind != TORCH:
                return None
            if mark.producer and mark.producer not in producers:
                producers.append(mark.producer)
        return producers
