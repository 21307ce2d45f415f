"""Unit tests of the run-time guard's parts: poison, global-state snapshots, timed-call contents,
the side-stream rule, the CUDA runtime wrapper, the scale-aware judge, guard settings."""

import json
import math
import statistics
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torch

from kforge_worker.guard import deferred_work, global_state
from kforge_worker.problem import generalisation
from kforge_worker.protocol.channel import ProtocolError
from kforge_worker.device.cudart import CudaRuntime, mapped_cudart_paths
from kforge_worker.guard.candidate_calls import CandidateCalls
from kforge_worker.guard.deferred_work import ThreadWatch, output_problems
from kforge_worker.guard.guard_settings import parse_guard
from kforge_worker.protocol.outputs import flatten
from kforge_worker.guard import poison
from kforge_worker.guard.poison import POISON_WORD, is_stale, poison_allocator, poison_sizes, poisoned_fraction
from kforge_worker.tolerance.scale_aware_judge import judge_scale_aware
from kforge_worker.problem.seeds import derived_seed
from kforge_worker.timing import timing_inputs
from kforge_worker.timing.timing_inputs import build_timed_models, calls_of_model, content_count, content_index, refill
from kforge_worker.problem.inputs import cast_inputs, make_inputs
from kforge_worker.problem.problem_loader import load_problem
from kforge_worker.guard.side_stream import side_stream_problem

CPU = torch.device("cpu")
WORKER_ROOT = Path(__file__).resolve().parents[1]


#: Run in a fresh interpreter: on cpu the poison is best effort and the heap's state decides which
#: chunk comes back, so in the test process earlier tests (threads, subprocess pipes) moved it.
_STALE_BLOCK = """
import json, sys, torch
from kforge_worker.guard.poison import poison_allocator, poison_sizes, poisoned_fraction
dtype = getattr(torch, sys.argv[1])
cpu = torch.device("cpu")
template = torch.zeros(2048 // torch.empty(0, dtype=dtype).element_size())  # 2 KiB: glibc reuses it
fractions = []
for _ in range(5):
    poison_allocator(poison_sizes([template], cpu), cpu)
    fractions.append(poisoned_fraction(torch.empty_like(template)))
print(json.dumps(fractions))
"""


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32"])
def test_an_unwritten_block_after_poisoning_is_stale(dtype):
    ran = subprocess.run(
        [sys.executable, "-c", _STALE_BLOCK, dtype],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=WORKER_ROOT,
        check=True,
    )
    fractions = json.loads(ran.stdout)
    assert max(fractions) >= 0.9 and sum(fraction >= 0.9 for fraction in fractions) >= 3, fractions


def test_written_outputs_and_torch_nans_never_match_the_pattern():
    poison_allocator([8 * 64 * 4], CPU)
    written = torch.empty(8, 64)
    written.copy_(torch.randn(8, 64))
    assert poisoned_fraction(written) == 0.0
    assert poisoned_fraction(torch.full((8, 64), float("nan"))) == 0.0
    assert is_stale(torch.full((8, 64), math.inf)) is None


def test_the_pattern_is_found_through_views_and_not_in_tiny_tensors():
    block = torch.empty(4096, dtype=torch.int32).fill_(POISON_WORD)
    as_float = block.view(torch.float32).view(64, 64)
    assert poisoned_fraction(as_float.t()) == 1.0
    assert poisoned_fraction(as_float[:, ::2]) == 1.0
    assert is_stale(as_float[:10]) == 1.0
    assert poisoned_fraction(torch.zeros(1, dtype=torch.float16)) is None
    half = as_float.clone()
    half.view(-1)[: 64 * 40] = 1.0
    assert is_stale(half) is None and poisoned_fraction(half) == pytest.approx(24 / 64)


def test_the_pattern_is_counted_in_chunks_across_their_boundaries(monkeypatch):
    """The check counts a chunk of words at a time (its temporaries stay a chunk's size); the count
    is the same as one pass, also for a view that starts off a word boundary."""
    monkeypatch.setattr(poison, "CHECK_CHUNK_WORDS", 7)
    block = torch.zeros(100, dtype=torch.int32)
    block[3:40] = POISON_WORD
    block[90:] = POISON_WORD
    assert poisoned_fraction(block) == pytest.approx(47 / 100)
    raw = torch.zeros(4 * 100 + 1, dtype=torch.uint8)
    raw[:400].view(torch.int32)[5:26] = POISON_WORD  # words at aligned addresses, as the allocator's
    odd = raw[1:]  # one byte into the buffer: its aligned words start three bytes in
    assert poisoned_fraction(odd) == pytest.approx(21 / 99)


def test_poison_sizes_skip_blocks_glibc_does_not_reuse():
    big = torch.empty(0).new_empty((9 * 1024 * 1024,))  # 36 MiB
    assert poison_sizes([big, [torch.zeros(3)]], CPU) == [12]
    assert poison_sizes([big], torch.device("cuda")) == [big.numel() * 4]


def test_output_problems_name_subclasses_meta_and_expanded_outputs():
    class Lazy(torch.Tensor):
        pass

    assert output_problems((torch.zeros(2), [torch.nn.Parameter(torch.zeros(2))])) == []
    assert "Lazy, a torch.Tensor subclass" in output_problems(torch.zeros(2).as_subclass(Lazy))[0]
    assert "meta device" in output_problems(torch.empty(3, device="meta"))[0]
    assert "output leaf 1" in output_problems((torch.zeros(2), torch.zeros(1).expand(5)))[0]


def test_thread_watch_sees_python_threads_left_running():
    watch = ThreadWatch()
    watch.before_call()
    assert watch.after_call() is None and watch.baseline is not None
    stop = threading.Event()
    watch.before_call()
    worker = threading.Thread(target=stop.wait, name="kforge-test-thread")
    worker.start()
    try:
        assert "kforge-test-thread" in watch.after_call()
    finally:
        stop.set()
        worker.join()


def test_global_state_changes_name_the_flag_and_its_check():
    before = global_state.snapshot()
    assert "torch.get_num_threads()" in before and "torch.backends.cudnn.enabled" in before
    after = dict(before, **{"torch.backends.cuda.matmul.allow_tf32": True, "torch.get_num_threads()": 99})
    found = global_state.changes(before, after)
    assert {change.flag for change in found} == {"torch.backends.cuda.matmul.allow_tf32", "torch.get_num_threads()"}
    assert global_state.first_check(found) == "precision"
    assert global_state.first_check(found[1:]) == "global-state"
    assert global_state.changes(before, global_state.snapshot()) == []
    with_l2 = global_state.snapshot(lambda: 1234)
    assert with_l2[global_state.PERSISTING_L2] == 1234
    assert global_state.changes(with_l2, dict(with_l2, **{global_state.PERSISTING_L2: 0}))[0].check == "global-state"


@pytest.mark.parametrize(
    "flag, change, undo",
    [
        ("denormals flushed to zero", lambda: torch.set_flush_denormal(True), lambda: torch.set_flush_denormal(False)),
        (
            "torch.get_deterministic_debug_mode()",
            lambda: torch.set_deterministic_debug_mode(1),
            lambda: torch.set_deterministic_debug_mode(0),
        ),
        (
            "torch.is_anomaly_enabled()",
            lambda: torch.set_anomaly_enabled(True),
            lambda: torch.set_anomaly_enabled(False),
        ),
        ("torch.is_warn_always_enabled()", lambda: torch.set_warn_always(True), lambda: torch.set_warn_always(False)),
    ],
)
def test_the_snapshot_reads_the_switches_the_static_guard_leaves_to_it(flag, change, undo):
    """A candidate's call of these is only a static note: the run-time comparison must see it."""
    before = global_state.snapshot()
    assert before[flag] in (False, 0)
    change()
    try:
        if flag == "denormals flushed to zero" and not global_state.snapshot()[flag]:
            pytest.skip("this CPU cannot flush denormals (torch.set_flush_denormal returned False)")
        assert flag in [item.flag for item in global_state.changes(before, global_state.snapshot())]
    finally:
        undo()
    assert global_state.changes(before, global_state.snapshot()) == []


def test_timed_call_contents_never_repeat_within_the_budget():
    models, warmup, perf = 3, 10, 100
    contents = content_count(models, warmup, perf, bytes_per_set=4096)
    assert contents == calls_of_model(0, models, warmup) + calls_of_model(0, models, perf) == 4 + 34
    seen = set()
    for phase, count in (("warmup", warmup), ("timed", perf)):
        for index in range(count):
            slot = content_index(phase, index, models, warmup, contents)
            assert slot[0] == index % models and slot not in seen
            seen.add(slot)
    assert len(seen) == warmup + perf


def test_warmup_calls_past_the_count_reuse_the_warmups_own_contents():
    models, warmup, perf = 3, 4, 12
    contents = content_count(models, warmup, perf, bytes_per_set=4096)
    warm = {content_index("warmup", index, models, warmup, contents) for index in range(warmup)}
    timed = {content_index("timed", index, models, warmup, contents) for index in range(perf)}
    extra = [content_index("warmup", index, models, warmup, contents) for index in range(warmup, 40)]
    assert set(extra) == warm and not warm & timed
    assert extra[:warmup] == [content_index("warmup", index, models, warmup, contents) for index in range(warmup)]


def test_content_budget_keeps_at_least_two_sets():
    assert content_count(3, 10, 100, bytes_per_set=2 * 1024**3) == 2
    assert content_count(3, 10, 100, bytes_per_set=100 * 1024**2) == 3
    assert content_count(1, 0, 1, bytes_per_set=1) == 1


def test_refill_keeps_tensor_identity_and_changes_values():
    live = [torch.zeros(4), (torch.zeros(2), 3), 7]
    address, identity = live[0].data_ptr(), id(live[0])
    same = refill(live, [torch.ones(4), (torch.full((2,), 2.0), 5), 8])
    assert same is live and live[0].data_ptr() == address and id(live[0]) == identity
    assert live[0].tolist() == [1.0] * 4 and live[1][0].tolist() == [2.0, 2.0] and live[1][1] == 5 and live[2] == 8
    reshaped = refill(live, [torch.ones(6), (torch.zeros(2), 3), 7])
    assert reshaped[0].shape == (6,)


ROWS_PROBLEM = """
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.randn(64))

    def forward(self, x):
        return x * self.scale


def get_inputs():
    return [torch.randn(64)]


def get_init_inputs():
    return []
"""


def test_live_sets_too_large_to_hold_are_shared_and_every_call_sees_its_own_contents(tmp_path, monkeypatch):
    """With no content set held (the pool too small for one per model, as at KernelBench's sizes),
    the timing models share one live set: before each call it holds that call's own contents (the
    model's content seed), which is what its sampled output is judged against; each model keeps
    its own weights. With the refills off (run-time checks off) every model keeps its own set."""
    path = tmp_path / "scale.py"
    path.write_text(ROWS_PROBLEM)
    problem = load_problem(str(path), None, None)
    monkeypatch.setattr(timing_inputs, "CONTENT_POOL_BYTES", 3 * 64 * 4 - 1)
    seeds, warmup, perf = [21, 22, 23], 2, 7
    calls = CandidateCalls(problem, problem.Model, CPU, None, guard=None, handover=None)
    models = build_timed_models(calls, seeds, warmup, perf)
    assert all(timed.live is models[0].live for timed in models)
    assert not torch.equal(models[0].model.scale, models[1].model.scale)
    contents = len(models[0].contents)
    for phase, count in (("warmup", warmup), ("timed", perf)):
        for index in range(count):
            model_index, content = content_index(phase, index, len(models), warmup, contents)
            timed = models[model_index]
            refill(timed.live, timed.contents[content])
            expected = cast_inputs(make_inputs(problem, timed.content_seeds[content], CPU), CPU, None)
            assert torch.equal(timed.live[0], expected[0]), (phase, index)
    unrefilled = build_timed_models(calls, seeds, warmup, perf, contents=1, refilled=False)
    assert len({id(timed.live) for timed in unrefilled}) == len(seeds)
    monkeypatch.setattr(timing_inputs, "CONTENT_POOL_BYTES", 1024**3)
    held = build_timed_models(calls, seeds, warmup, perf)
    assert len({id(timed.live) for timed in held}) == len(seeds)


def test_derived_seeds_are_stable_and_distinct():
    assert derived_seed(21, 1) == 3350528861
    assert len({derived_seed(21, index) for index in range(1000)}) == 1000
    assert all(0 <= derived_seed(2**32 - 1, index) < 2**32 for index in range(10))


@pytest.mark.parametrize(
    "event, gap, flagged",
    [
        (0.023, 0.207, True),  # c03 on the H200: a 0.23 ms wall around a 0.023 ms event time
        (0.049, 0.008, False),  # h03, side stream joined back: only the synchronize's cost remains
        (0.022, 0.006, False),  # h01
        (1.0, 1.2, True),  # a long kernel with more hidden work behind it
        (4.0, 1.9, False),  # a long kernel: the gap is under half its time plus the slack
    ],
)
def test_side_stream_rule(event, gap, flagged):
    assert bool(side_stream_problem([event] * 5, [gap] * 5)) is flagged


def test_a_busy_host_stretching_most_gaps_is_not_a_side_stream():
    """An honest small kernel on a loaded host: 60 of 100 calls preempted between the end event and
    the synchronize (0.3 ms gap), the rest as on an idle host. The median gap alone would flag it."""
    gaps = [0.3] * 60 + [0.006] * 40
    assert side_stream_problem([0.02] * 100, gaps) == ""
    assert statistics.median(gaps) > 0.5 * 0.02 + 0.05, "the case a median rule would get wrong"


def test_hidden_work_in_every_call_is_flagged_through_noise():
    """c03's shape: every call leaves 0.19-0.23 ms of hidden work, a few calls were preempted too."""
    gaps = [0.19 + 0.0004 * index for index in range(100)]
    gaps[::7] = [0.9] * len(gaps[::7])
    assert "work ran on a stream the events do not see" in side_stream_problem([0.023] * 100, gaps)


def test_no_timed_calls_means_no_finding():
    assert side_stream_problem([], []) == ""


def test_cuda_runtime_without_libraries_skips_everything(tmp_path):
    maps = tmp_path / "maps"
    maps.write_text(
        "7f0000000000-7f0000001000 r-xp 00000000 08:01 1 /usr/lib/libc.so.6\n"
        f"7f0000002000-7f0000003000 r-xp 00000000 08:01 2 {maps}\n"
        "7f0000004000-7f0000005000 r-xp 00000000 08:01 3 /nonexistent/libcudart.so.12\n"
    )
    assert mapped_cudart_paths(str(maps)) == []
    cudart_file = tmp_path / "libcudart.so.13"
    cudart_file.write_text("")
    maps.write_text(maps.read_text() + f"7f0000006000-7f0000007000 r-xp 00000000 08:01 4 {cudart_file}\n" * 2)
    assert mapped_cudart_paths(str(maps)) == [str(cudart_file)]
    runtime = CudaRuntime([])
    assert runtime.available is False and runtime.take_last_errors() == []
    assert runtime.persisting_l2_limit() is None
    assert runtime.reset_persisting_l2(None) == ["no libcudart could be loaded"]


def _softmax(seed: int):
    logits = torch.randn(4, 8192, generator=torch.Generator().manual_seed(seed))
    return flatten(torch.softmax(logits, dim=1))


@pytest.mark.parametrize(
    "make, check",
    [
        (lambda ref: torch.zeros_like(ref), "degenerate-output"),
        (lambda ref: torch.full_like(ref, 1 / 8192), "degenerate-output"),
        (lambda ref: ref * 0.5, "degenerate-output"),
        (lambda ref: ref * 1.05, "scale-aware-mismatch"),
        (lambda ref: ref * (1 + 1e-4), None),
    ],
)
def test_scale_aware_judge_tells_trivial_outputs_from_wrong_ones(make, check):
    reference = _softmax(3)
    candidate = flatten(make(reference.leaves[0]))
    outcome = judge_scale_aware(reference, candidate, 0.01)
    assert outcome["check"] == check and outcome["passed"] is (check is None)
    assert outcome["trivial_relative_l2_error"] == pytest.approx(0.79, abs=0.05)


def test_guard_settings_defaults_and_errors():
    settings = parse_guard({})
    assert settings.policy_name == "kernelbench" and settings.gate_specialisation is False
    assert parse_guard({"guard": {"policy": "default"}}).policy_name == "own-kernels"
    custom = parse_guard(
        {
            "guard": {
                "policy": {"base": "own-kernels", "name": "mine", "severity": {"torch-fallback": "note"}},
                "gate_specialisation": True,
            }
        }
    )
    assert custom.policy_name == "mine" and custom.gate_specialisation is True
    for bad in ({"policy": "nonexistent"}, {"policy": 3}, {"gate": True}, {"gate_specialisation": "yes"}, []):
        with pytest.raises(ProtocolError):
            parse_guard({"guard": bad})


def test_generalisation_plan_scales_the_batch():
    class Problem:
        batch_size = 8

    assert generalisation.plan(Problem, [5]) == [(5, {"batch_size": 16}), (5, {"batch_size": 4})]
    assert generalisation.plan(Problem, []) == []
    assert generalisation.effective_seeds([], True, [11]) == [derived_seed(11, 1000), derived_seed(11, 1001)]
    assert generalisation.effective_seeds([], False, [11]) == []
    with generalisation.overridden(Problem, {"batch_size": 16}):
        assert Problem.batch_size == 16
    assert Problem.batch_size == 8
    assert "no integer constant 'rows'" in generalisation.variant_problem(Problem, {"rows": 2})


def test_thread_watch_waits_for_a_joined_thread_to_exit(monkeypatch):
    # join() returns before the OS thread has left /proc/self/task: a count above the baseline that
    # falls back within the settle window is no deferred work (seen in CI on cpu/h06e).
    watch = ThreadWatch()
    watch.before_call()
    watch.after_call(torch.zeros(4))
    counts = iter([watch.baseline + 1, watch.baseline + 1, watch.baseline])
    monkeypatch.setattr(deferred_work, "os_thread_count", lambda: next(counts, watch.baseline))
    watch.before_call()
    assert watch.after_call(torch.zeros(4)) is None


def test_thread_watch_rejects_an_output_finished_while_the_thread_exits(monkeypatch):
    watch = ThreadWatch()
    watch.before_call()
    watch.after_call(torch.zeros(4))
    output = torch.zeros(4)
    calls = []

    def count_while_writing():
        calls.append(1)
        if len(calls) == 2:  # the "helper thread" writes the answer during the wait, then exits
            output.fill_(1.0)
            return watch.baseline
        return watch.baseline + 1

    monkeypatch.setattr(deferred_work, "os_thread_count", count_while_writing)
    watch.before_call()
    assert "the output changed after the call returned" in watch.after_call(output)


def test_thread_watch_rejects_an_os_thread_that_stays(monkeypatch):
    watch = ThreadWatch()
    watch.before_call()
    watch.after_call(torch.zeros(4))
    monkeypatch.setattr(deferred_work, "SETTLE_SECONDS", 0.02)
    monkeypatch.setattr(deferred_work, "os_thread_count", lambda: watch.baseline + 1)
    watch.before_call()
    assert "OS threads after the call" in watch.after_call(torch.zeros(4))
