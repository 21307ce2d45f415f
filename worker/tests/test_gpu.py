"""The cuda and triton backends on a real GPU (skipped where torch sees no CUDA device)."""

import resource
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

import sources
from worker_process import evaluate

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

GPU = dict(device="cuda:0", preset="gpu", perf_trials=20, warmup_trials=3, sample_calls=[5, 19])
BASELINES = {"eager": True, "compile": True, "perf_trials": 20, "warmup_trials": 3}


@pytest.fixture(scope="module")
def runs(tmp_path_factory, build_dir):
    root = tmp_path_factory.mktemp("gpu")
    problem = root / "add.py"
    problem.write_text(sources.ADD_PROBLEM.replace("size = 4096", "size = 1 << 22"))
    cases = {
        "cuda": ("cuda", sources.CUDA_ADD_CORRECT, BASELINES),
        "cuda-broken": ("cuda", sources.CUDA_BROKEN, None),
        "cuda-illegal": ("cuda", sources.CUDA_ILLEGAL_ADDRESS, None),
        "triton": ("triton", sources.TRITON_ADD_CORRECT, None),
        "triton-broken": ("triton", sources.TRITON_COMPILE_ERROR, None),
    }
    jobs = {}
    with ThreadPoolExecutor(max_workers=3) as pool:
        for name, (backend, source, baselines) in cases.items():
            candidate = root / f"{name}.py"
            candidate.write_text(source)
            jobs[name] = pool.submit(
                evaluate, problem, candidate, root / name, build_dir, backend=backend, baselines=baselines, **GPU
            )
        return {name: job.result() for name, job in jobs.items()}


def test_hello_describes_the_gpu(runs):
    environment = runs["cuda"].candidate.messages[0]["environment"]
    assert environment["device"] == torch.cuda.get_device_name(0)
    major, minor = torch.cuda.get_device_capability(0)
    assert environment["capability"] == f"{major}.{minor}"
    assert environment["sm_count"] > 0 and environment["cuda"] and environment["l2_bytes"] > 0
    if shutil.which("nvidia-smi"):
        assert environment["driver"] and environment["clocks"]["sm_max_mhz"] > 0, environment


def test_cuda_extension_is_correct_timed_and_described(runs):
    result = runs["cuda"]
    assert result.failures == {}, result.candidate.stderr[-3000:]
    assert result.judgement["passed"] is True and result.timed_judgement["passed"] is True
    assert len(result.timing["times_ms"]) == len(result.timing["wall_ms"]) == 20
    assert all(0 < event <= wall for event, wall in zip(result.timing["times_ms"], result.timing["wall_ms"]))
    info = result.candidate.of_type("build-info")[0]
    kernels = [kernel for kernel in info["kernels"] if "kforge_add_kernel" in kernel["name"]]
    assert kernels and kernels[0]["registers"] > 0, info
    assert "kforge_add_kernel" in info["sass"]
    assert ".entry" in info["ptx"] and "kforge_add_kernel" in info["ptx"], info["ptx"][:2000]
    baseline = result.baseline
    assert len(baseline["eager"]["times_ms"]) == 20
    assert len(baseline["compile"]["times_ms"]) == 20, baseline["compile"]
    for worker in (result.candidate, result.reference):
        for end in [message for message in worker.of_type("stage") if message["status"] == "end"]:
            memory = end["memory"]
            assert 0 <= memory["device_allocated_peak_bytes"] <= memory["device_peak_bytes"], (end["stage"], memory)
            if end["stage"] in ("correctness", "reference"):  # the inputs and outputs are tensors on the device
                assert memory["device_allocated_peak_bytes"] > 0, (end["stage"], memory)


def test_cuda_compile_error_carries_nvcc_output(runs):
    failure = runs["cuda-broken"].failures["candidate"]
    assert (failure["kind"], failure["check"]) == ("compile_error", "build")
    assert "kforge_undefined_device_value" in failure["compiler_output"]
    assert "kforge_undefined_device_value" in failure["message"]


def test_illegal_address_is_a_device_error(runs):
    failure = runs["cuda-illegal"].failures["candidate"]
    assert (failure["stage"], failure["kind"], failure["check"]) == ("correctness", "runtime_error", "device-error")


def test_triton_kernel_is_correct(runs):
    result = runs["triton"]
    assert result.failures == {}, result.candidate.stderr[-3000:]
    assert result.judgement["passed"] is True and result.timed_judgement["passed"] is True


def test_triton_compile_error_at_first_call_is_a_compile_error(runs):
    failure = runs["triton-broken"].failures["candidate"]
    assert (failure["stage"], failure["kind"], failure["check"]) == ("correctness", "compile_error", "build")
    assert "kforge_not_a_triton_name" in failure["compiler_output"]


REPOSITORY = Path(__file__).resolve().parents[2]


def test_gpu_sized_problem_keeps_the_reference_on_the_gpu(tmp_path, build_dir):
    """The shipped ReLU at its gpu preset (2^28 floats, 1 GiB a tensor): correct, with the reference
    stage well inside its limit and no worker process holding the references in host memory.

    Before the reference role kept its outputs on the device, it held every seed's float32 and
    float64 outputs on the host (3 GiB a seed, 8 seeds and more) and judged there: 8 evaluations at
    once were killed for memory on a 125 GiB H200 host, and layer norm's reference stage ran past
    its 300 s limit. `ru_maxrss` of the reaped children is the largest worker's peak (KiB)."""
    result = evaluate(
        REPOSITORY / "problems" / "level1" / "01_relu.py",
        REPOSITORY / "examples" / "level1_01_relu" / "cuda_fast.py",
        tmp_path,
        build_dir,
        backend="cuda",
        **GPU,
    )
    for role, worker in (("reference", result.reference), ("candidate", result.candidate)):
        print(
            role,
            {
                message["stage"]: message["duration_ms"]
                for message in worker.of_type("stage")
                if message["status"] == "end"
            },
        )
    assert result.failures == {}, result.candidate.stderr[-3000:]
    assert result.judgement["passed"] is True and result.timed_judgement["passed"] is True
    reference_ms = [
        message["duration_ms"]
        for message in result.reference.of_type("stage")
        if message["stage"] == "reference" and message["status"] == "end"
    ]
    assert reference_ms and reference_ms[0] < 120_000, reference_ms
    peak_gib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    assert peak_gib < 16, f"a worker peaked at {peak_gib:.1f} GiB of host memory"


def test_inputs_are_drawn_on_the_gpu_and_digested_there():
    """get_inputs() under the device default (same values for the same seed, on the GPU), and the
    word digest equal on the GPU and the CPU for the same bytes."""
    from kforge_worker.device import device_digest
    from kforge_worker.problem.inputs import make_inputs
    from kforge_worker.problem.problem_loader import load_problem

    problem = load_problem(str(REPOSITORY / "problems" / "level1" / "01_relu.py"), "cpu")
    device = torch.device("cuda", 0)
    first, again = make_inputs(problem, 7, device), make_inputs(problem, 7, device)
    assert first[0].device.type == "cuda" and torch.equal(first[0], again[0])
    assert not torch.equal(first[0], make_inputs(problem, 8, device)[0])
    assert device_digest.word_digest(first[0]) == device_digest.word_digest(first[0].cpu())


def test_outputs_reach_the_judge_device_to_device(runs):
    """Every judged output of a cuda candidate travels through a CUDA IPC handle into the judge's
    own memory (docs/worker-protocol.md, the output hand-over), with no fallback to the pipe."""
    received = runs["cuda"].reference.of_type("handover-received")
    assert received, runs["cuda"].reference.stderr[-2000:]
    assert {message["transport"] for message in received} == {"cuda-ipc"}, received
    assert all(message["ipc_error"] is None and message["bytes"] > 0 for message in received), received


def test_the_hold_keeps_a_slow_launch_out_of_the_device_time():
    """A call that spends 0.3 ms on the host before launching a short kernel: with the hold its
    device time is the kernel's; with the flush alone the device waits for the host inside the
    timed region (docs/timing.md, the hold)."""
    import time

    from kforge_worker.timing.timing import TimingOptions, time_calls

    device = torch.device("cuda", 0)
    data = torch.randn(1 << 16, device=device)

    def slow_launch():
        until = time.perf_counter() + 0.0003
        while time.perf_counter() < until:
            pass
        return data * 2

    kernel = time_calls([lambda: data * 2], 10, 50, device)
    held = time_calls([slow_launch], 10, 50, device)
    bare = time_calls([slow_launch], 10, 50, device, options=TimingOptions(hold=False))
    kernel_ms = sorted(kernel.times_ms)[25]
    assert held.hold_ms >= 0.3 and held.exposed_calls <= 2, (held.hold_ms, held.exposed_calls)
    assert sorted(held.times_ms)[25] < kernel_ms + 0.05, (sorted(held.times_ms)[25], kernel_ms)
    assert sorted(bare.times_ms)[25] > kernel_ms + 0.15, (sorted(bare.times_ms)[25], kernel_ms)
    assert bare.exposed_calls >= 45 and all(wall >= 0.3 for wall in held.wall_ms)


def test_the_cross_check_sums_the_kernels_own_durations():
    """Two kernels per call with a host pause between their launches: back-to-back events see the
    pause (the device waits for the second launch), the kernels' own durations do not, and they
    agree with the per-call loop's figure for one kernel alone (docs/timing.md, cross-check)."""
    import time

    from kforge_worker.timing.cross_check import KERNEL_CALLS, cross_check
    from kforge_worker.timing.timing import time_calls

    device = torch.device("cuda", 0)
    data = torch.randn(1 << 24, device=device)

    def paused_pair():
        first = data * 2
        until = time.perf_counter() + 0.002
        while time.perf_counter() < until:
            pass
        return first + 1

    checked = cross_check([paused_pair], 30, device, None)
    kernels = checked["kernels"]
    assert kernels["method"] == "kernel-durations" and "unavailable" not in kernels, kernels
    assert len(kernels["times_ms"]) == KERNEL_CALLS
    one_kernel_ms = sorted(time_calls([lambda: data * 2], 10, 50, device).times_ms)[25]
    summed = sorted(kernels["times_ms"])[KERNEL_CALLS // 2]
    events = sorted(checked["times_ms"])[15]
    assert one_kernel_ms < summed < 3 * one_kernel_ms, (summed, one_kernel_ms)
    assert events > summed + 1.5, (events, summed)


def test_the_memory_profile_writes_a_snapshot_per_stage_naming_what_was_allocated(tmp_path):
    import pickle

    from kforge_worker.protocol import sampling_profile

    sampler = sampling_profile.Sampler(directory=str(tmp_path), role="candidate", memory=True)
    sampler.enter("correctness")
    held = torch.empty(64 * 1024**2, dtype=torch.uint8, device="cuda")
    sampler.leave()
    del held
    torch.cuda.memory._record_memory_history(enabled=None)
    snapshots = sorted(tmp_path.glob("candidate-*-01-correctness.pickle"))
    assert len(snapshots) == 1
    snapshot = pickle.loads(snapshots[0].read_bytes())
    sizes = [block["size"] for segment in snapshot["segments"] for block in segment["blocks"]]
    assert any(size >= 64 * 1024**2 for size in sizes), "the 64 MiB tensor alive at the stage's end is not in it"
