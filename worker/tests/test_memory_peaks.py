"""The reference role holds one trial's working set, not one per trial (docs/sizes.md).

At KernelBench's sizes (a 6 GiB input) every tensor the reference role keeps beyond one trial is
gigabytes of device memory. These tests run the role in this process on the cpu backend (host
memory stands in for device memory: the stage peaks are the resident set's high-water mark) with
Python's cyclic collector off, so that a tensor freed only by the collector stays counted, as it
does in a worker that allocates few Python objects between its gigabyte tensors.
"""

import gc
import os
import subprocess
import sys
import threading
import weakref
from pathlib import Path

import pytest
import torch

from kforge_worker.device.memory_usage import resident_bytes
from kforge_worker.guard.input_digest import input_digest
from kforge_worker.problem.inputs import make_inputs
from kforge_worker.problem.problem_loader import load_problem
from kforge_worker.problem.stress import stress_inputs, stressed_seed
from kforge_worker.roles.size_estimate import measure_shapes, roles
from kforge_worker.protocol import outputs
from kforge_worker.protocol.channel import Channel
from kforge_worker.protocol.output_wire import header_of
from kforge_worker.roles import reference_role
from kforge_worker.roles.reference_store import ReferenceStore
from kforge_worker.timing import baselines, timing

MIB = 1024**2
#: A 32 MiB float32 input (and output): big beside the interpreter's own allocations, quick to compute.
ROWS, COLUMNS = 512, 16384
INPUT_BYTES = ROWS * COLUMNS * 4
CORRECTNESS_SEEDS = [11, 12, 13, 14, 15]
TIMING_SEEDS = [21, 22, 23]

RELU = f"""
import torch

batch_size = {ROWS}
dim = {COLUMNS}


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
"""


@pytest.fixture
def collector_off():
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


def test_a_flattened_output_is_freed_without_the_cyclic_collector(collector_off):
    tensor = torch.ones(4)
    flat = outputs.flatten((tensor, [tensor * 2, 3]), keep_device=True, copy=True)
    leaves = [weakref.ref(leaf) for leaf in flat.leaves if isinstance(leaf, torch.Tensor)]
    del flat
    assert [leaf() for leaf in leaves] == [None, None]


def test_a_batch_holds_its_kept_outputs_and_the_one_in_flight(monkeypatch):
    alive = []
    most = [0]

    def call():
        most[0] = max(most[0], sum(ref() is not None for ref in alive))
        output = torch.zeros(1024)
        alive.append(weakref.ref(output))
        return output

    kept, _ = timing.time_batch([call] * 12, torch.device("cpu"), keep=3)
    assert len(kept) == 3
    assert most[0] <= 4

    monkeypatch.setattr(baselines, "BATCH_POOL_BYTES", 2 * 4096)
    alive.clear()
    most[0] = 0
    baselines.batch_figures([call], per_call_ms=0.001, device=torch.device("cpu"), rounds=1, output_bytes=4096)
    assert most[0] <= 3  # two kept outputs and the one being returned, of a batch of 2000 calls


def _candidate_outputs(problem_path: Path, directory: Path) -> list:
    """The hand-overs a correct candidate makes for the correctness seeds (relu of the same inputs),
    each with its bytes under `bytes` (written into the pipe when the judge asks)."""
    problem = load_problem(str(problem_path), None, None)
    stressed = stressed_seed(problem, CORRECTNESS_SEEDS, TIMING_SEEDS)
    entries = []
    for seed in CORRECTNESS_SEEDS:
        inputs = make_inputs(problem, seed, torch.device("cpu"))
        if seed == stressed:  # the stressed trial's inputs, as both roles make them
            inputs = stress_inputs(inputs)
        flat = outputs.flatten(torch.relu(inputs[0]))
        entry = {"id": f"correctness-{seed}", "seed": seed, "input_digest": input_digest(inputs), **header_of(flat)}
        entries.append({**entry, "ipc": None, "bytes": flat.leaves[0].numpy().tobytes()})
        del inputs, flat
    return entries


def _write_pipe(pipe: Path, data: bytes) -> None:
    fd = os.open(pipe, os.O_WRONLY)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _run_reference(problem_path: Path, judged: list) -> dict:
    """Stage name -> host peak bytes above the resident set before the role ran."""
    request = {
        "v": 1,
        "type": "reference",
        "problem": str(problem_path),
        "backend": "cpu",
        "precision": "fp32",
        "device": "cpu",
        "correctness_seeds": CORRECTNESS_SEEDS,
        "timing_seeds": TIMING_SEEDS,
        "baselines": {"eager": True, "compile": False, "perf_trials": 5, "warmup_trials": 1, "budget_ms": 3000},
        "atol": 1e-2,
        "rtol": 1e-2,
    }
    pipe = problem_path.parent / "handover"
    request["handover_pipe"] = str(pipe)
    data = {entry["id"]: entry.pop("bytes") for entry in judged}
    later = iter([{"v": 1, "type": "judge", "atol": 1e-2, "rtol": 1e-2, "outputs": judged}])
    messages, writers = [], []

    def send(kind, **fields):
        messages.append({"type": kind, **fields})
        if kind == "handover-ready":  # the candidate's side: its bytes into the pipe
            writers.append(threading.Thread(target=_write_pipe, args=(pipe, data[fields["id"]])))
            writers[-1].start()

    channel = Channel(send=send, receive=lambda: next(later, None))
    base = resident_bytes()
    reference_role.run_reference(channel, request)
    for writer in writers:
        writer.join()
    judgement = [message for message in messages if message["type"] == "judgement"]
    assert judgement and judgement[0]["passed"], messages[-1]
    return {
        message["stage"]: message["memory"]["host_peak_bytes"] - base
        for message in messages
        if message["type"] == "stage" and message["status"] == "end"
    }


def test_the_reference_role_holds_one_trial_and_the_estimate_says_so(tmp_path, monkeypatch, collector_off):
    """Every stage's peak is one trial's working set, not one per trial: judging a trial holds the
    reference's output in float32 and float64 and the candidate's (4 input sizes), the comparison's
    chunk temporaries (about 3 more here) and a recomputed reference before it; one more trial's
    record kept would add 3 input sizes. Here no reference outputs are kept between stages (the
    store's keep budget, which the estimate counts apart) and a trusted batch holds one output.
    The estimate of the stages that compute and judge references (the role's estimate without
    timing: the baselines' batches are as long as the calls are fast, which the estimate cannot
    know) is within 25% of their peak."""
    problem_path = tmp_path / "relu.py"
    problem_path.write_text(RELU)
    judged = _candidate_outputs(problem_path, tmp_path)
    monkeypatch.setattr(ReferenceStore.__init__, "__defaults__", (0, (), None))
    # The baselines' trusted batches hold their outputs within a pool (16 of these outputs by
    # default, as many as the calls are fast enough for); here one.
    monkeypatch.setattr(baselines, "BATCH_POOL_BYTES", INPUT_BYTES)
    peaks = _run_reference(problem_path, judged)
    assert set(peaks) == {"reference", "baseline", "judge"}
    for stage, peak in peaks.items():
        assert peak < 10 * INPUT_BYTES, f"the {stage} stage held {peak / MIB:.0f} MiB for a 32 MiB input"

    problem = load_problem(str(problem_path), None, None)
    estimate = roles(measure_shapes(problem, "fp32"), "fp32", "cpu", timing=False)
    working = estimate["reference_bytes"] - estimate["reference_kept_bytes"]
    measured = max(peaks["reference"], peaks["judge"])
    assert 0.75 * working <= measured <= 1.25 * working, (measured / MIB, working / MIB)


HEAP_PROBE = """
import ctypes, sys
from kforge_worker.device.memory_usage import steady_host_allocator
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
if sys.argv[1] == "steady":
    assert steady_host_allocator()


def heap():
    for line in open("/proc/self/maps"):
        if line.rstrip().endswith("[heap]"):
            start, end = line.split()[0].split("-")
            return int(start, 16), int(end, 16)


size = 24 << 20
block = libc.malloc(size)
start, end = heap()
inside = start <= block < end
libc.free(block)
print(int(inside), int(heap()[1] >= block + size))
"""


def _heap_block(mode: str):
    """(whether a 24 MiB block came from the heap, whether the heap kept it once freed), in a fresh
    interpreter with the roles' allocator settings (`steady`) or glibc's defaults."""
    worker_root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", HEAP_PROBE, mode], cwd=worker_root, capture_output=True, text=True, check=True
    )
    inside, kept = done.stdout.split()
    return inside == "1", kept == "1"


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux's /proc")
def test_the_roles_allocator_keeps_blocks_of_a_few_mib_in_the_heap():
    """With the roles' settings (set at start by __main__) a block of a few MiB, an output's size,
    comes from the heap and stays there once freed, for the next call's output; with glibc's
    defaults it is mapped anew and unmapped when freed, so each call faults its pages in again."""
    assert _heap_block("steady") == (True, True)
    assert _heap_block("default") == (False, False)


def test_the_estimate_counts_a_timed_output_judged_beside_the_candidates_timing_state():
    """KernelBench's 19_ReLU at its own size (6 GiB in, 6 GiB out, no weights): a timed call's output
    is handed over while the candidate keeps its timing state (a live input set and a trusted
    batch), and the reference recomputes that call's reference to judge it (6 GiB in, 6 GiB out,
    then the candidate's 6 GiB output beside it; no float64 twin for a timed call). Counting only
    the larger role, as before, said 31.5 GiB."""
    gib = 1024**3
    figures = {
        "input_bytes": 6 * gib,
        "parameter_bytes": 0,
        "output_bytes": 6 * gib,
        "forward_peak_bytes": 6 * gib,
        "input_bytes_fp64": 12 * gib,
        "parameter_bytes_fp64": 0,
    }
    timed = roles(figures, "fp32", "cuda", timing=True)
    untimed = roles(figures, "fp32", "cuda", timing=False)
    judging = 6 * gib + 6 * gib  # the recomputed reference's output beside the candidate's
    timing_state = 6 * gib + (6 * gib + 6 * gib)  # one live input set, then a trusted batch's call
    assert timed["evaluation_bytes"] >= judging + timing_state + timed["fixed_bytes"]
    assert timed["evaluation_bytes"] > max(timed["reference_bytes"], timed["candidate_bytes"]) + timed["fixed_bytes"]
    # Untimed, the candidate gives its cached blocks back before each hand-over: the larger role counts.
    assert (
        untimed["evaluation_bytes"]
        == max(untimed["reference_bytes"], untimed["candidate_bytes"]) + untimed["fixed_bytes"]
    )
