"""outputs.py directly: flattening, descriptions, and the file round trip."""

import gc
import json
import math
import struct
import weakref

import pytest
import torch

from kforge_worker.protocol import output_file, outputs


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


def test_round_trip_through_an_output_file(tmp_path):
    value = (
        torch.randn(3, 4).to(torch.bfloat16),
        [2, float("nan"), -0.25, None, "text"],
        torch.tensor(True),
        torch.arange(5, dtype=torch.int64)[1:],
        torch.empty(0, 3),
    )
    flat = outputs.flatten(value)
    path = tmp_path / "sub" / "out.out"
    outputs.save(flat, str(path))
    loaded = outputs.load(str(path))
    assert loaded.skeleton == flat.skeleton and loaded.leaf_info == flat.leaf_info
    assert torch.equal(loaded.leaves[0], flat.leaves[0]) and loaded.leaves[0].dtype == torch.bfloat16
    assert loaded.leaves[1] == 2 and math.isnan(loaded.leaves[2]) and loaded.leaves[3] == -0.25
    assert loaded.leaves[4] is None and loaded.leaves[5] == "text"
    assert torch.equal(loaded.leaves[6], torch.tensor(True))
    assert torch.equal(loaded.leaves[7], torch.tensor([1, 2, 3, 4]))
    assert loaded.leaves[8].shape == (0, 3)


def test_tensors_of_many_chunks_round_trip_on_several_threads(tmp_path, monkeypatch):
    """Chunks of 4 KiB read on four threads, each its own chunks at their offsets: the bytes come
    back where they were written, for tensors of whole and partial last chunks, after another
    tensor and a value; a file cut short is refused."""
    monkeypatch.setattr(output_file, "STAGING_BYTES", 4096)
    monkeypatch.setattr(output_file, "IO_THREADS", 4)
    value = (
        torch.arange(50_000, dtype=torch.int32),
        1.5,
        torch.randn(257, 129, dtype=torch.float64),
        torch.randint(0, 2, (8192,), dtype=torch.bool),
    )
    flat = outputs.flatten(value)
    path = tmp_path / "many.out"
    outputs.save(flat, str(path))
    loaded = outputs.load(str(path))
    assert torch.equal(loaded.leaves[0], value[0]) and loaded.leaves[1] == 1.5
    assert torch.equal(loaded.leaves[2], value[2]) and torch.equal(loaded.leaves[3], value[3])
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size - 10)
    with pytest.raises(outputs.OutputFileError):
        outputs.load(str(path))


def test_the_chunks_of_a_tensor_are_dealt_to_threads_each_once_in_order(monkeypatch):
    monkeypatch.setattr(output_file, "STAGING_BYTES", 10)
    moved = []
    output_file.in_chunks(95, lambda worker, start, count: moved.append((worker, start, count)), threads=3)
    assert sorted((start, count) for _, start, count in moved) == [
        (start, min(10, 95 - start)) for start in range(0, 95, 10)
    ]
    for worker in range(3):
        assert [start for who, start, _ in moved if who == worker] == list(range(10 * worker, 95, 30))

    def failing(worker, start, count):
        if start == 40:
            raise output_file.OutputFileFormatError("it ends inside a tensor")

    with pytest.raises(output_file.OutputFileFormatError, match="ends inside"):
        output_file.in_chunks(95, failing, threads=3)


def test_a_device_copy_is_not_the_output_itself():
    output = torch.ones(4)
    flat = outputs.flatten(output, keep_device=True, copy=True)
    output.zero_()
    assert torch.equal(flat.leaves[0], torch.ones(4))
    assert outputs.flatten(output, keep_device=True).leaves[0].data_ptr() == output.data_ptr()


def test_loading_refuses_missing_foreign_and_malformed_files(tmp_path):
    with pytest.raises(outputs.OutputFileError, match="does not exist"):
        outputs.load(str(tmp_path / "absent.out"))
    torch.save({"some": torch.zeros(1)}, tmp_path / "foreign.pt")
    with pytest.raises(outputs.OutputFileError, match="not a kforge output file"):
        outputs.load(str(tmp_path / "foreign.pt"))
    (tmp_path / "pickle.pt").write_bytes(b"\x80\x04\x95not really a pickle")
    with pytest.raises(outputs.OutputFileError, match="not a kforge output file"):
        outputs.load(str(tmp_path / "pickle.pt"))


def _header_file(path, header, data=b""):
    body = json.dumps(header).encode()
    path.write_bytes(output_file.MAGIC + struct.pack("<Q", len(body)) + body + data)
    return str(path)


@pytest.mark.parametrize(
    "header, data, why",
    [
        ({"skeleton": "T", "leaves": [], "leaf_info": [{"type": "tensor"}]}, b"", "lacks"),
        (
            {
                "skeleton": "T",
                "leaf_info": [{"type": "tensor"}],
                "leaves": [{"tensor": {"dtype": "float32", "shape": [4], "offset": 0, "nbytes": 16}}],
            },
            b"\0" * 8,
            "does not match",
        ),
        (
            {
                "skeleton": "T",
                "leaf_info": [{"type": "tensor"}],
                "leaves": [{"tensor": {"dtype": "float32", "shape": [4], "offset": 0, "nbytes": 12}}],
            },
            b"\0" * 16,
            "does not match",
        ),
        (
            {
                "skeleton": "T",
                "leaf_info": [{"type": "tensor"}],
                "leaves": [{"tensor": {"dtype": "object", "shape": [1], "offset": 0, "nbytes": 8}}],
            },
            b"\0" * 8,
            "malformed",
        ),
        (
            {
                "skeleton": "T",
                "leaf_info": [{"type": "tensor"}],
                "leaves": [{"tensor": {"dtype": "uint8", "shape": [-1], "offset": 0, "nbytes": 0}}],
            },
            b"",
            "shape",
        ),
        ({"skeleton": "L", "leaf_info": [{"type": "float"}], "leaves": [{"value": "not hex"}]}, b"", "malformed"),
    ],
)
def test_loading_refuses_headers_that_do_not_fit_their_contents(tmp_path, header, data, why):
    with pytest.raises(outputs.OutputFileError, match=why):
        outputs.load(_header_file(tmp_path / "bad.out", header, data))


def test_a_header_longer_than_the_file_is_refused(tmp_path):
    path = tmp_path / "short.out"
    path.write_bytes(output_file.MAGIC + struct.pack("<Q", 1 << 40) + b"{}")
    with pytest.raises(outputs.OutputFileError, match="header length"):
        outputs.load(str(path))


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
