"""Tests of kforge_worker.timing.roofline: bytes, FLOPs and the speed-of-light bound."""

from __future__ import annotations

import pytest
import torch

from kforge_worker.timing.roofline import (
    count_bytes,
    floored_ms,
    lower_bound_ms,
    measure_reference,
    run_and_count_flops,
    share_of_speed_of_light,
    tensor_bytes,
)

MIB = 1024 * 1024


def test_elementwise_relu_moves_input_plus_output_and_no_flops():
    x = torch.randn(1024, 1024)
    measured = measure_reference(torch.nn.ReLU(), [x])
    assert measured["input_bytes"] == 4 * MIB and measured["output_bytes"] == 4 * MIB
    assert measured["bytes_moved"] == 8 * MIB and measured["state_bytes"] == 0
    assert measured["flops"] == 0
    bound = lower_bound_ms(measured["bytes_moved"], measured["flops"], 2e12, 60e12)
    assert bound == pytest.approx(8 * MIB / 2e12 * 1e3)  # 0.0041943 ms at 2 TB/s
    assert share_of_speed_of_light(bound * 4, bound) == pytest.approx(0.25)


def test_bytes_count_nested_values_and_model_state():
    assert tensor_bytes((torch.zeros(3, dtype=torch.float16), [torch.zeros(2, dtype=torch.int64)])) == 3 * 2 + 2 * 8
    linear = torch.nn.Linear(16, 8)
    assert count_bytes([torch.zeros(4, 16)], torch.zeros(4, 8), linear) == (64 + 8 * 16 + 8 + 32) * 4


@pytest.mark.parametrize(
    "build",
    [
        lambda: (lambda a, b: torch.matmul(a, b)),
        lambda: (lambda a, b: a @ b),
    ],
)
def test_matmul_flops_are_two_m_n_k(build):
    _, flops, method = run_and_count_flops(build(), [torch.randn(64, 16), torch.randn(16, 32)])
    assert method in ("flop_counter", "estimate")
    assert flops == 2 * 64 * 32 * 16


def test_linear_module_flops_and_compute_bound():
    model = torch.nn.Linear(256, 512, bias=False)
    measured = measure_reference(model, [torch.randn(128, 256)])
    assert measured["flops"] == 2 * 128 * 512 * 256
    bound = lower_bound_ms(measured["bytes_moved"], measured["flops"], 1e15, 1e9)
    assert bound == pytest.approx(measured["flops"] / 1e9 * 1e3)


def test_bound_is_the_slower_of_memory_and_compute():
    assert lower_bound_ms(1e9, 1e9, 1e12, 1e15) == pytest.approx(1.0)
    assert lower_bound_ms(1e6, 1e12, 1e12, 1e15) == pytest.approx(1.0)
    assert lower_bound_ms(1e6, 0, 1e12, None) == pytest.approx(1e-3)


@pytest.mark.parametrize("args", [(-1, 0, 1e12, 1e12), (1, 0, 0, 1e12), (1, 5, 1e12, None), (1, 5, 1e12, 0)])
def test_bound_rejects_meaningless_arguments(args):
    with pytest.raises(ValueError):
        lower_bound_ms(*args)


def test_share_of_speed_of_light_and_floor():
    assert share_of_speed_of_light(2.0, 1.0) == 0.5
    assert share_of_speed_of_light(0.5, 1.0) == 2.0  # faster than light
    assert floored_ms(0.001, 0.25) == 0.25 and floored_ms(3.0, 0.25) == 3.0
    with pytest.raises(ValueError):
        share_of_speed_of_light(0.0, 1.0)
