"""outputs.py directly: flattening, descriptions, and the file round trip."""

import math

import pytest
import torch

from kforge_worker import outputs


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
        "[(tensor float16 (2,), [tensor int64 (3,), int, float], NoneType, {'scale': bool})]")


def test_one_element_tuple_differs_from_a_bare_leaf():
    assert outputs.flatten((torch.zeros(1),)).skeleton == "(T,)"
    assert outputs.flatten([torch.zeros(1)]).skeleton == "[T]"


def test_dict_keys_that_look_like_leaves_do_not_confuse_the_description():
    flat = outputs.flatten({"T'L": torch.zeros(2)})
    assert outputs.describe(flat) == "[{\"T'L\": tensor float32 (2,)}]"


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


def test_round_trip_through_a_weights_only_file(tmp_path):
    value = (torch.randn(3, 4).to(torch.bfloat16), [2, float("nan"), -0.25, None, "text"], torch.tensor(True))
    flat = outputs.flatten(value)
    path = tmp_path / "sub" / "out.pt"
    outputs.save(flat, str(path))
    loaded = outputs.load(str(path))
    assert loaded.skeleton == flat.skeleton and loaded.leaf_info == flat.leaf_info
    assert torch.equal(loaded.leaves[0], flat.leaves[0]) and loaded.leaves[0].dtype == torch.bfloat16
    assert loaded.leaves[1] == 2 and math.isnan(loaded.leaves[2]) and loaded.leaves[3] == -0.25
    assert loaded.leaves[4] is None and loaded.leaves[5] == "text"
    assert torch.equal(loaded.leaves[6], torch.tensor(True))


def test_loading_refuses_missing_foreign_and_malformed_files(tmp_path):
    with pytest.raises(outputs.OutputFileError, match="does not exist"):
        outputs.load(str(tmp_path / "absent.pt"))
    torch.save({"some": torch.zeros(1)}, tmp_path / "foreign.pt")
    with pytest.raises(outputs.OutputFileError, match="not a kforge output file"):
        outputs.load(str(tmp_path / "foreign.pt"))
    torch.save({"format": outputs.FILE_FORMAT, "skeleton": "T", "leaves": [], "leaf_info": [{"type": "tensor"}]},
               tmp_path / "malformed.pt")
    with pytest.raises(outputs.OutputFileError, match="malformed"):
        outputs.load(str(tmp_path / "malformed.pt"))
    (tmp_path / "pickle.pt").write_bytes(b"\x80\x04\x95not really a pickle")
    with pytest.raises(outputs.OutputFileError, match="cannot be loaded"):
        outputs.load(str(tmp_path / "pickle.pt"))
