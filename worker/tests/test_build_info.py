"""build_info.py directly: parsing `cuobjdump --dump-resource-usage` output."""

from kforge_worker.build.build_info import collect_build_info, parse_resource_usage

RESOURCE_USAGE = """
Fatbin elf code:
================
arch = sm_90a
code version = [1,8]
host = linux
compile_size = 64bit

Resource usage:
 Common:
  GLOBAL:0
 Function _Z17kforge_add_kernelPKfS0_Pfl:
  REG:16 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:928 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _Z12tiled_kernelPf:
  REG:40 STACK:16 SHARED:8192 LOCAL:24 CONSTANT[0]:904 TEXTURE:0 SURFACE:0 SAMPLER:0

Fatbin ptx code:
================
arch = sm_90a
code version = [8,8]
host = linux
compile_size = 64bit
"""


def test_parses_every_kernel_with_its_resources():
    kernels = parse_resource_usage(RESOURCE_USAGE)
    assert [
        (k["mangled"], k["arch"], k["registers"], k["shared_bytes"], k["stack_bytes"], k["local_bytes"])
        for k in kernels
    ] == [
        ("_Z17kforge_add_kernelPKfS0_Pfl", "sm_90a", 16, 0, 0, 0),
        ("_Z12tiled_kernelPf", "sm_90a", 40, 8192, 16, 24),
    ]
    assert kernels[0]["name"] in (
        "_Z17kforge_add_kernelPKfS0_Pfl",
        "kforge_add_kernel(float const*, float const*, float*, long)",
    )


def test_no_objects_gives_empty_info():
    info = collect_build_info([])
    assert info["kernels"] == [] and info["sass"] == "" and info["ptx"] == ""


def test_cuda_builds_embed_their_ptx_beside_the_machine_code():
    """TORCH_CUDA_ARCH_LIST names the device's own architecture with `+PTX`, so the fatbin that
    `build-info` reads holds PTX too (without it cuobjdump --dump-ptx prints only a header); a
    torch that does not know the architecture gets it plain."""
    from unittest import mock

    import torch

    from kforge_worker.backends.nvidia import cuda_arch_list

    with mock.patch.object(torch.cuda, "get_device_capability", return_value=(8, 6)):
        assert cuda_arch_list(torch.device("cuda:0")) == "8.6+PTX"
    with mock.patch.object(torch.cuda, "get_device_capability", return_value=(99, 9)):
        assert cuda_arch_list(torch.device("cuda:0")) == "99.9"
