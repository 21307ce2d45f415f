"""outputs.py directly: flattening, descriptions, and the file round trip."""

import gc
import json
import math
import os
import threading
import weakref

import pytest
import torch

from kforge_worker.protocol import output_wire, outputs
from kforge_worker.protocol.handover_receive import Refusal, check_header


def test_single_tensor_is_one_leaf():
    flat = outputs.flatten(torch.zeros(16, 1024))
    assert flat.skeleton == "T"
    assert flat.leaf_info == [{"type": "tensor", "device": "cpu"}]
    assert outputs.describe(flat) == "[tensor float32 (16, 1024)]"


def test_nested_structure_with_non_tensor_leaves():
    value = (torch.ones(2, dtype=torch.float16), [torch.arange(3), 7, 2.5], None, {"scale": True})
    flat = outputs.flatten(value)
    assert flat.skeleton == "(T, [T, L, L], L, {'scale': L})"
    assert [info["type"] for info in flat.leaf_info] == ["tensor", "tensor", "int", "float", "NoneType", "bool"]
    assert outputs.describe(flat) == (
        "[(tensor float16 (2,), [tensor int64 (3,), int, float], NoneType, {'scale': bool})]"
    )


def test_one_element_tuple_differs_from_a_bare_leaf():
    assert outputs.flatten((torch.zeros(1),)).skeleton == "(T,)"
    assert outputs.flatten([torch.zeros(1)]).skeleton == "[T]"


def test_dict_keys_that_look_like_leaves_do_not_confuse_the_description():
    flat = outputs.flatten({"T'L": torch.zeros(2)})
    assert outputs.describe(flat) == '[{"T\'L": tensor float32 (2,)}]'


def test_leaves_are_detached_compact_cpu_copies():
    base = torch.arange(100.0, requires_grad=True)
    view = (base * 1)[10:20]
    leaf = outputs.flatten(view).leaves[0]
    assert not leaf.requires_grad
    assert leaf.storage().size() == 10
    view.data.zero_()
    assert leaf[0].item() == 10.0


def test_tensor_subclass_is_marked_and_stored_as_plain_tensor():
    class Lazy(torch.Tensor):
        pass

    flat = outputs.flatten(torch.zeros(3).as_subclass(Lazy))
    assert flat.leaf_info[0]["type"] == "tensor-subclass:Lazy"
    assert type(flat.leaves[0]) is torch.Tensor


def test_cycles_are_refused():
    looped = []
    looped.append(looped)
    with pytest.raises(outputs.OutputStructureError):
        outputs.flatten(looped)


def test_a_device_copy_is_not_the_output_itself():
    output = torch.ones(4)
    flat = outputs.flatten(output, keep_device=True, copy=True)
    output.zero_()
    assert torch.equal(flat.leaves[0], torch.ones(4))
    assert outputs.flatten(output, keep_device=True).leaves[0].data_ptr() == output.data_ptr()


def _through_a_pipe(flat, targets):
    """Writes `flat`'s tensor leaves into a pipe from a thread and reads them into `targets`."""
    read_fd, write_fd = os.pipe()

    def write():
        try:
            for leaf in flat.leaves:
                if isinstance(leaf, torch.Tensor):
                    output_wire.write_tensor(write_fd, leaf)
        finally:
            os.close(write_fd)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        for target in targets:
            output_wire.read_tensor(read_fd, target, patience_s=10)
        left = output_wire.pending_bytes(read_fd)
    finally:
        writer.join()
        os.close(read_fd)
    return left


def test_a_header_and_the_pipe_carry_every_dtype_and_value(monkeypatch):
    monkeypatch.setattr(output_wire, "STAGING_BYTES", 4096)
    values = (
        torch.randn(3, 5000),
        torch.arange(7, dtype=torch.int64),
        torch.randn(9).to(torch.bfloat16),
        torch.tensor([True, False]),
        float("nan"),
        2,
        None,
    )
    flat = outputs.flatten(values, keep_device=True)
    header = output_wire.header_of(flat)
    assert json.loads(json.dumps(header)) == header  # JSON through the protocol as it is
    reference = outputs.flatten(values)
    specs = check_header(header, reference)
    targets = [torch.empty(spec[1], dtype=spec[0]) for spec in specs if isinstance(spec, tuple)]
    assert _through_a_pipe(flat, targets) is False
    for target, leaf in zip(targets, [leaf for leaf in values if isinstance(leaf, torch.Tensor)]):
        assert torch.equal(target, leaf)
    assert math.isnan(specs[4]) and specs[5:] == [2, None]


def test_the_judge_refuses_a_header_that_does_not_fit_the_reference():
    reference = outputs.flatten((torch.zeros(4, 4), 1))
    good = output_wire.header_of(outputs.flatten((torch.ones(4, 4), 1)))
    assert not isinstance(check_header(good, reference), Refusal)
    wide = output_wire.header_of(outputs.flatten((torch.ones(4, 5), 1)))
    assert check_header(wide, reference) == Refusal(
        "shape", "output leaf 0 has shape (4, 5), the reference's is (4, 4)"
    )
    forged = json.loads(json.dumps(good))
    forged["leaves"][0]["tensor"]["shape"] = [1 << 40]
    assert check_header(forged, reference).check == "shape"
    forged["leaves"][0]["tensor"] = {"dtype": "float32", "shape": "/etc/passwd"}
    assert check_header(forged, reference).check == "structure"
    forged = json.loads(json.dumps(good))
    forged["leaves"][0]["tensor"]["dtype"] = "object"
    assert check_header(forged, reference).check == "dtype"
    forged["leaves"][0]["tensor"]["dtype"] = "complex128"  # 4 times the reference's bytes: refused unread
    assert check_header(forged, reference) == Refusal(
        "dtype", "output leaf 0 has dtype complex128, the reference's is torch.float32"
    )
    assert check_header({"path": "/etc/shadow"}, reference).check == "structure"
    assert check_header({**good, "skeleton": "(T, T)"}, reference).check == "structure"


def test_bytes_beyond_an_output_are_seen():
    flat = outputs.flatten(torch.ones(8), keep_device=True)
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, torch.ones(8).numpy().tobytes() + b"x")
        target = torch.empty(8)
        output_wire.read_tensor(read_fd, target, patience_s=1)
        assert torch.equal(target, flat.leaves[0]) and output_wire.pending_bytes(read_fd) is True
        with pytest.raises(output_wire.PipeStalled, match="no byte came"):
            output_wire.read_tensor(read_fd, torch.empty(8), patience_s=0.2)
    finally:
        os.close(read_fd)
        os.close(write_fd)


@pytest.mark.parametrize("keep_device, copy", [(False, False), (True, False), (True, True)])
def test_a_flattened_output_is_freed_when_dropped_without_the_cyclic_collector(keep_device, copy):
    """At KernelBench's sizes each output is gigabytes: a reference cycle around the leaves (a
    recursive closure did this) kept every flattened output alive until `gc` happened to run."""
    gc.collect()
    gc.disable()
    try:
        flat = outputs.flatten((torch.ones(8), [torch.zeros(2, 3)]), keep_device=keep_device, copy=copy)
        leaves = [weakref.ref(leaf) for leaf in flat.leaves]
        del flat
        assert [leaf() for leaf in leaves] == [None, None]
    finally:
        gc.enable()
