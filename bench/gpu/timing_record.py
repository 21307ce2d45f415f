"""The H200 timing record of issue 16 (docs/timing.md): kforge's timing routine against
`triton.testing.do_bench` and `ncu`, and its spread over fresh processes, before and after.

For every shipped CUDA example meant to be correct (examples/*/cuda_fast.py against its problem at
the `gpu` preset) and every published kernel of a good-kernels checkout (each folder's src.py
against its ref.py), in fresh processes:

- kforge's routine (worker/kforge_worker/timing/timing.py) on the candidate, eager and torch.compile:
  medians over 100 calls rotating through three input sets, in every process (`--processes`, 10;
  published kernels in the first `--published-processes`, 5);
- the routine of commit 3cc42c8 (a synchronize between the flush and the start event), kept here
  only, as "before", and `triton.testing.do_bench`, in the first three processes;
- `ncu`'s gpu__time_duration.sum of the kernels of three calls (one process per kernel, when ncu
  is on PATH and `--no-ncu` is not given), with ncu's default clock control (clocks locked to
  base) and again with `--clock-control none` (`--ncu-clocks base|free` takes one of the two:
  kforge times with the clocks free, so `free` is the like-for-like one when a lease is short);
- with `--bare`, in every process, each label a second time without the hold (the flush alone: the
  routine of 2026-12-03 evening), with the hold's length and the calls whose launch outran it;
- with `--corpus-rows N,…`, more published kernels: those rows of bench/gpu/kernelbench-corpus.tsv
  (issue 15's corpus, numbered as in its record), each against its own problem file, from
  `--corpus-root` (`.gpu-corpus/selected`);
- with `--only NAME,…`, only those kernels (names as in the table: `level1_02_gelu`,
  `good-kernels/LayerNorm`);
- three shipped examples again at a sixteenth of their `gpu` size (SMALL: names ending `@small`,
  16 Mi elements, about 20–60 µs a call on an H200), for the issue's 3% bound from 20 µs up;
- with `--knobs`, three more processes per knob of `TimingOptions` (no flush, 0.5 s warm-up,
  blocked call order) for the shipped examples, as time allows.

Builds happen first, in parallel processes sharing `OUT/build` (and torch.compile's cache in
`OUT/inductor`), so timing processes only load. Everything stops starting new work past
`--deadline-s` (450 s by default, for an 8-minute lease) and says what it skipped.

    python3 bench/gpu/timing_record.py OUT [--corpus PATH/ScalingIntelligence+good-kernels]

Writes OUT/timing_record.json (every figure) and OUT/timing_record.md (the tables for
docs/benchmarks/timing-h200.md).
"""

import argparse
import concurrent.futures
import contextlib
import csv
import importlib.util
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "worker"))
from device_lock import kforge_device_lock  # noqa: E402 (bench/gpu, beside this file)
from kernelbench_corpus import DEFAULT_LIST as CORPUS_LIST, read_list  # noqa: E402

SEEDS = (21, 22, 23)
CALLS, WARMUP = 100, 10
#: The record of `child_floor` (the routine with nothing, or one single-element kernel, to time).
FLOOR = "floor"
#: ncu's runs per kernel: the record's key, ncu's --clock-control, and the --ncu-clocks that take it.
NCU_RUNS = (("{name}", "base", ("both", "base")), ("{name} (clocks free)", "none", ("both", "free")))
KNOBS = {"no-flush": {"flush": False}, "warmup-500ms": {"warmup_min_ms": 500.0}, "blocked": {"order": "blocked"}}
# (Every process also times each label with the flush alone, `hold=False`: the routine before the hold.)


#: Shipped examples timed again at smaller sizes (constants of the problem over its `gpu` preset).
SMALL = {
    "level1_02_gelu": {"batch_size": 4096, "dim": 4096},
    "level1_05_softmax": {"batch_size": 256, "dim": 65536},
    "level1_07_layer_norm": {"batch_size": 2},
}


def sized(problem, overrides):
    """A problem path with constant overrides, as the children read it: `PATH@name=value,...`."""
    return problem + "@" + ",".join(f"{name}={value}" for name, value in overrides.items()) if overrides else problem


def unsized(spec):
    """(path, overrides) of a `sized` problem."""
    path, _, sizes = spec.partition("@")
    return path, {name: int(value) for name, value in (part.split("=") for part in sizes.split(",") if part)}


def corpus_rows(rows, root):
    """[(name, problem, candidate, True)] of the corpus list's rows numbered `rows` (the `#` of
    docs/benchmarks/kernelbench-corpus-h200.md), paths under `root` (the corpus folder)."""
    listed = {pair.index: pair for pair in read_list(CORPUS_LIST)}
    found = []
    for row in rows:
        pair = listed.get(row)
        if pair is None:
            raise SystemExit(f"{CORPUS_LIST} has no row {row} (it has {len(listed)})")
        paths = [str(Path(root) / path) for path in (pair.problem, pair.candidate)]
        missing = [path for path in paths if not Path(path).exists()]
        if missing:
            raise SystemExit(f"corpus row {row}: no such file: {', '.join(missing)}")
        found.append((f"corpus/{row:02d}-{Path(pair.problem).stem}", paths[0], paths[1], True))
    return found


def pairs(corpus, rows=(), rows_root=None, small=True):
    """[(name, problem, candidate, published)] to record (the `@small` sizes unless `small` is off)."""
    found = []
    for candidate in sorted(ROOT.glob("examples/level*_*/cuda_fast.py")):
        level, number, stem = candidate.parent.name.split("_", 2)
        problem = ROOT / "problems" / level / f"{number}_{stem}.py"
        if problem.exists():
            found.append((candidate.parent.name, str(problem), str(candidate), False))
            if small and candidate.parent.name in SMALL:
                small = sized(str(problem), SMALL[candidate.parent.name])
                found.append((candidate.parent.name + "@small", small, str(candidate), False))
    if corpus:
        for folder in sorted(Path(corpus).iterdir()):
            if (folder / "ref.py").exists() and (folder / "src.py").exists():
                found.append((f"good-kernels/{folder.name}", str(folder / "ref.py"), str(folder / "src.py"), True))
    if rows:
        found.extend(corpus_rows(rows, rows_root))
    return found


# --- the routine of commit 3cc42c8, kept here only as "before" ------------------------------------


def old_time_calls(calls, warmup_trials, perf_trials, device, l2_bytes):
    import torch

    for index in range(warmup_trials):
        calls[index % len(calls)]()
        torch.cuda.synchronize(device)
    flush = torch.empty(2 * l2_bytes, dtype=torch.uint8, device=device)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for index in range(perf_trials):
        torch.cuda.synchronize(device)
        flush.zero_()
        torch.cuda.synchronize(device)
        start.record()
        calls[index % len(calls)]()
        end.record()
        torch.cuda.synchronize(device)
        times.append(float(start.elapsed_time(end)))
    return times


# --- child processes -------------------------------------------------------------------------------


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def prepared(problem_path, candidate_path, device):
    """(candidate calls, eager calls) over the three timing seeds, built as kforge builds them."""
    from kforge_worker.problem.inputs import cast_inputs, make_inputs, make_model
    from kforge_worker.problem.precision import run_dtype
    from kforge_worker.problem.problem_loader import load_problem
    from kforge_worker.timing.timing import bound_calls

    path, overrides = unsized(problem_path)
    problem = load_problem(path, "gpu", overrides)
    candidate = load_module(candidate_path, f"candidate_{abs(hash(candidate_path))}")
    dtype = run_dtype("fp32")
    construct = {"kind": "runtime_error", "check": "construct", "context": "the constructor raised"}
    sets, reference = [], []
    for seed in SEEDS:
        inputs = cast_inputs(make_inputs(problem, seed, device), device, dtype)
        sets.append((make_model(problem, candidate.ModelNew, seed, device, dtype, **construct), inputs))
        reference.append((make_model(problem, problem.Model, seed, device, dtype, **construct), inputs))
    return bound_calls(sets), bound_calls(reference), reference


def median_of(times):
    return statistics.median(times) if times else None


def child_build(problem_path, candidate_path):
    import torch

    device = torch.device("cuda", 0)
    with torch.no_grad():
        candidate, eager, reference = prepared(problem_path, candidate_path, device)
        candidate[0]()
        if hasattr(torch, "compile"):
            torch.compile(reference[0][0])(*reference[0][1])
        torch.cuda.synchronize()
    return {"built": True}


def child_time(
    entries, round_index, options, bare_too=False, noflush_too=False, floor=False, warmup_ms=0.0, per_call=False
):
    import torch
    from kforge_worker.protocol.environment import l2_cache_bytes
    from kforge_worker.timing.timing import TimingOptions, time_calls

    device = torch.device("cuda", 0)
    l2_bytes = l2_cache_bytes(device) or 64 * 1024 * 1024
    knobs = TimingOptions(**{"warmup_min_ms": warmup_ms, **options})
    results = []
    for name, problem_path, candidate_path in entries:
        record = {"name": name, "round": round_index}
        try:
            with torch.no_grad():
                candidate, eager, reference = prepared(problem_path, candidate_path, device)
                compiled = (
                    [lambda model=torch.compile(model), inputs=inputs: model(*inputs) for model, inputs in reference]
                    if hasattr(torch, "compile")
                    else []
                )
                for call in compiled:
                    call()
                for label, calls in (("candidate", candidate), ("eager", eager), ("compile", compiled)):
                    if not calls:
                        continue
                    began = time.time()
                    timed = time_calls(calls, WARMUP, CALLS, device, l2_bytes, options=knobs)
                    record[f"{label}_ms"] = median_of(timed.times_ms)
                    if per_call:  # the host's clock around the routine, to set beside the clock log
                        record[f"{label}_span"] = [began, time.time()]
                        record[f"{label}_calls_ms"] = [round(value, 5) for value in timed.times_ms]
                        record[f"{label}_warmup_calls"] = timed.warmup_calls
                    record[f"{label}_wall_ms"] = median_of(timed.wall_ms)
                    record[f"{label}_hold_ms"] = timed.hold_ms
                    record[f"{label}_exposed"] = timed.exposed_calls
                    if not options and label == "candidate" and noflush_too:
                        plain = time_calls(calls, WARMUP, CALLS, device, l2_bytes, options=TimingOptions(flush=False))
                        record["candidate_noflush_ms"] = median_of(plain.times_ms)
                    if not options and bare_too:
                        bare = time_calls(calls, WARMUP, CALLS, device, l2_bytes, options=TimingOptions(hold=False))
                        record[f"{label}_nohold_ms"] = median_of(bare.times_ms)
                        record[f"{label}_nohold_exposed"] = bare.exposed_calls
                    if round_index < 3 and not options:
                        record[f"{label}_old_ms"] = median_of(old_time_calls(calls, WARMUP, CALLS, device, l2_bytes))
                if round_index < 3 and not options:
                    try:
                        from triton.testing import do_bench

                        record["do_bench_ms"] = float(do_bench(candidate[0], return_mode="median"))
                    except Exception as error:  # noqa: BLE001 -- recorded, not fatal
                        record["do_bench_error"] = str(error).splitlines()[0][:200]
        except Exception as error:  # noqa: BLE001 -- one kernel failing must not lose the others
            record["error"] = str(error).splitlines()[0][:300] if str(error) else type(error).__name__
        results.append(record)
        print(json.dumps(record), flush=True)
    if not options and floor:
        record = child_floor(device, l2_bytes, round_index)
        results.append(record)
        print(json.dumps(record), flush=True)
    return results


def child_floor(device, l2_bytes, round_index):
    """What the routine reads where there is (almost) nothing to time, in this process: no work
    between the events ("empty") and one single-element kernel ("kernel"), each with the flush and
    without it. ncu's duration of the same kernel (`child_ncu_floor`) against "kernel" is the
    routine's own overhead at the smallest sizes (the events around the work, the first kernel's
    start behind the flush)."""
    import torch
    from kforge_worker.timing.timing import TimingOptions, time_calls

    record = {"name": FLOOR, "round": round_index}
    one = torch.zeros(1, device=device)
    with torch.no_grad():
        for label, call in (("empty", lambda: None), ("kernel", lambda: one.add_(1))):
            for suffix, options in (("", TimingOptions()), ("_noflush", TimingOptions(flush=False))):
                timed = time_calls([call], WARMUP, CALLS, device, l2_bytes, options=options)
                record[f"{label}{suffix}_ms"] = median_of(timed.times_ms)
                record[f"{label}{suffix}_exposed"] = timed.exposed_calls
    return record


def child_ncu_floor():
    """The single-element kernel of `child_floor`, three times in the range ncu profiles."""
    import torch

    one = torch.zeros(1, device=torch.device("cuda", 0))
    for _ in range(3):
        one.add_(1)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("kforge")
    for _ in range(3):
        one.add_(1)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


def child_ncu(problem_path, candidate_path):
    import torch

    device = torch.device("cuda", 0)
    with torch.no_grad():
        candidate, _, _ = prepared(problem_path, candidate_path, device)
        for _ in range(3):
            candidate[0]()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("kforge")
        for _ in range(3):
            candidate[0]()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()


# --- the parent ------------------------------------------------------------------------------------


def environment(out):
    env = dict(os.environ)
    env["TORCH_EXTENSIONS_DIR"] = str(out / "build")
    env["TORCHINDUCTOR_CACHE_DIR"] = str(out / "inductor")
    env["PYTHONPATH"] = str(ROOT / "worker") + os.pathsep + env.get("PYTHONPATH", "")
    return env


CLOCK_FIELDS = "clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active"


@contextlib.contextmanager
def clock_log(path):
    """Samples the GPU's SM and memory clocks, power, temperature and clock-event reasons every
    100 ms (nvidia-smi) into `path`, each line led by the host's clock (time.time()) when it was
    read, so that the samples line up with the host times the timing processes record."""
    import threading

    fields = CLOCK_FIELDS
    try:  # older drivers name the reasons clocks_throttle_reasons; leave them out there
        if subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv"], capture_output=True).returncode:
            fields = fields.rsplit(",", 1)[0]
        command = ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits", "-lms", "100"]
        sampler = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as error:
        path.write_text(f"# no clock log: {error}\n")
        yield
        return

    def copy():
        with path.open("w") as sink:
            sink.write(f"host_time,{fields}\n")
            for line in sampler.stdout:
                sink.write(f"{time.time():.3f},{line.strip()}\n")
                sink.flush()

    thread = threading.Thread(target=copy, daemon=True)
    thread.start()
    try:
        yield
    finally:
        sampler.terminate()
        thread.join(timeout=5)


def run_child(out, args, timeout):
    command = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(args), str(out)]
    return subprocess.run(command, env=environment(out), capture_output=True, text=True, timeout=timeout)


def ncu_ms(out, problem_path, candidate_path, timeout, clock_control="base"):
    """Mean per-call sum of gpu__time_duration over the three profiled calls, ms (None if ncu failed).
    `clock_control`: ncu's `--clock-control` (its default, `base`, locks the clocks to their base
    values while it profiles; `none` leaves them as the application runs)."""
    child = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        json.dumps(
            {"kind": "ncu-floor"}
            if problem_path is None
            else {"kind": "ncu", "problem": problem_path, "candidate": candidate_path}
        ),
        str(out),
    ]
    command = [
        "ncu",
        "--csv",
        "--clock-control",
        clock_control,
        "--metrics",
        "gpu__time_duration.sum",
        "--nvtx",
        "--nvtx-include",
        "kforge/",
        *child,
    ]
    done = subprocess.run(command, env=environment(out), capture_output=True, text=True, timeout=timeout)
    lines = done.stdout[done.stdout.find('"ID"') :] if '"ID"' in done.stdout else ""
    total_ns = 0.0
    for row in csv.DictReader(io.StringIO(lines)):
        if row.get("Metric Name") == "gpu__time_duration.sum":
            scale = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9}.get(
                row.get("Metric Unit", "nsecond"), 1.0
            )
            total_ns += float(row["Metric Value"].replace(",", "")) * scale
    return total_ns / 3 / 1e6 if total_ns > 0 else None


def spread(values):
    values = [value for value in values if value]
    return max(values) / min(values) - 1 if len(values) >= 2 else None


def summarize(found, rounds, ncu, knobs):
    summary = {}
    for name, _, _, published in found:
        records = [record for record in rounds if record["name"] == name and "error" not in record]
        entry = {
            "published": published,
            "processes": len(records),
            "errors": sorted({record["error"] for record in rounds if record["name"] == name and "error" in record}),
        }
        for label in ("candidate", "eager", "compile"):
            medians = [record.get(f"{label}_ms") for record in records]
            entry[label] = {
                "medians_ms": medians,
                "median_ms": median_of([m for m in medians if m]),
                "spread": spread(medians),
                "wall_ms": median_of([r.get(f"{label}_wall_ms") for r in records if r.get(f"{label}_wall_ms")]),
                "old_ms": median_of([r[f"{label}_old_ms"] for r in records if r.get(f"{label}_old_ms")]),
            }
            bare = [record.get(f"{label}_nohold_ms") for record in records]
            entry[label]["nohold"] = {
                "medians_ms": bare,
                "median_ms": median_of([m for m in bare if m]),
                "spread": spread(bare),
                "exposed": sum(r.get(f"{label}_nohold_exposed") or 0 for r in records),
            }
            entry[label]["hold_ms"] = median_of([r[f"{label}_hold_ms"] for r in records if r.get(f"{label}_hold_ms")])
            entry[label]["exposed"] = sum(r.get(f"{label}_exposed") or 0 for r in records)
        plain = [r.get("candidate_noflush_ms") for r in records if r.get("candidate_noflush_ms")]
        entry["candidate"]["noflush"] = {"median_ms": median_of(plain), "spread": spread(plain)}
        entry["do_bench_ms"] = median_of([r["do_bench_ms"] for r in records if "do_bench_ms" in r])
        entry["ncu_ms"] = ncu.get(name)
        entry["ncu_free_ms"] = ncu.get(f"{name} (clocks free)")
        for other in ("do_bench_ms", "ncu_ms", "ncu_free_ms"):
            if entry[other] and entry["candidate"]["median_ms"]:
                entry[f"ratio_to_{other[:-3]}"] = entry["candidate"]["median_ms"] / entry[other]
        entry["knobs"] = {
            knob: spread([r.get("candidate_ms") for r in records_of])
            for knob, records_of in ((knob, [r for r in knobs.get(knob, []) if r["name"] == name]) for knob in KNOBS)
        }
        summary[name] = entry
    floors = [record for record in rounds if record["name"] == FLOOR]
    if floors:
        summary[FLOOR] = {
            "processes": len(floors),
            "ncu_ms": ncu.get(FLOOR),
            "ncu_free_ms": ncu.get(f"{FLOOR} (clocks free)"),
            **{
                field: {
                    "median_ms": median_of([r[f"{field}_ms"] for r in floors if r.get(f"{field}_ms") is not None]),
                    "spread": spread([r.get(f"{field}_ms") for r in floors]),
                    "exposed": sum(r.get(f"{field}_exposed") or 0 for r in floors),
                }
                for field in ("empty", "empty_noflush", "kernel", "kernel_noflush")
            },
        }
    return summary


def markdown(summary, skipped, started):
    def ms(value):
        return "—" if value is None else f"{value:.4f}"

    def pct(value):
        return "—" if value is None else f"{value * 100:.2f}%"

    lines = [
        f"Recorded {time.strftime('%Y-%m-%d %H:%M', time.localtime(started))} with "
        f"`python3 bench/gpu/timing_record.py OUT --corpus …/ScalingIntelligence+good-kernels`.",
        "",
        "| kernel | processes | candidate ms (new) | old | do_bench | ncu | new/do_bench | new/ncu | "
        "ncu, clocks free | new/ncu, clocks free | "
        "spread cand. | eager ms | spread eager | compile ms | spread compile | cand. wall ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    floor = summary.pop(FLOOR, None)
    for name, entry in summary.items():
        c, e, k = entry["candidate"], entry["eager"], entry["compile"]
        lines.append(
            f"| {name} | {entry['processes']} | {ms(c['median_ms'])} | {ms(c['old_ms'])} | "
            f"{ms(entry['do_bench_ms'])} | "
            f"{ms(entry['ncu_ms'])} | {ms(entry.get('ratio_to_do_bench'))} | {ms(entry.get('ratio_to_ncu'))} | "
            f"{ms(entry.get('ncu_free_ms'))} | {ms(entry.get('ratio_to_ncu_free'))} | "
            f"{pct(c['spread'])} | {ms(e['median_ms'])} | {pct(e['spread'])} | {ms(k['median_ms'])} | "
            f"{pct(k['spread'])} | {ms(c['wall_ms'])} |"
        )
    lines += [
        "",
        "The hold (a spin kernel ahead of the flush, docs/timing.md) against the flush alone, same processes: "
        "medians, spreads, the hold's length and the timed calls whose launch outran it (of 100 per process).",
        "",
        "| kernel | label | with hold ms | spread | hold ms | exposed | flush alone ms | spread | exposed |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in summary.items():
        for label in ("candidate", "eager", "compile"):
            figure = entry[label]
            bare = figure.get("nohold") or {}
            if figure["median_ms"] is None and bare.get("median_ms") is None:
                continue
            lines.append(
                f"| {name} | {label} | {ms(figure['median_ms'])} | {pct(figure['spread'])} | "
                f"{ms(figure.get('hold_ms'))} | {figure.get('exposed', 0)} | {ms(bare.get('median_ms'))} | "
                f"{pct(bare.get('spread'))} | {bare.get('exposed', 0)} |"
            )
    knob_rows = [
        (name, entry["knobs"]) for name, entry in summary.items() if any(v is not None for v in entry["knobs"].values())
    ]
    if knob_rows:
        lines += [
            "",
            "| kernel | " + " | ".join(f"spread, {knob}" for knob in KNOBS) + " |",
            "|---|" + "---|" * len(KNOBS),
        ]
        lines += [f"| {name} | " + " | ".join(pct(knobs[knob]) for knob in KNOBS) + " |" for name, knobs in knob_rows]
    plain = [(name, entry) for name, entry in summary.items() if entry["candidate"]["noflush"]["median_ms"]]
    if plain:
        lines += [
            "",
            "The candidate without the flush, same processes (the flush's cost on its first kernel: the "
            "L2 lines the flush left dirty are written back while it runs; without the flush some of its "
            "data may also be in L2 already).",
            "",
            "| kernel | with flush ms | without ms | spread without | difference µs |",
            "|---|---|---|---|---|",
        ]
        for name, entry in plain:
            with_flush, without = entry["candidate"]["median_ms"], entry["candidate"]["noflush"]["median_ms"]
            lines.append(
                f"| {name} | {ms(with_flush)} | {ms(without)} | {pct(entry['candidate']['noflush']['spread'])} | "
                f"{(with_flush - without) * 1000:.2f} |"
            )
    if floor:
        lines += [
            "",
            f"The routine with nothing to time, in the same {floor['processes']} processes (medians of the "
            "per-process medians of 100 calls; ncu: the kernel's gpu__time_duration):",
            "",
            "| timed | with flush ms | spread | exposed | without flush ms | spread | ncu ms | ncu ms, clocks free |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for field, what in (("empty", "no work between the events"), ("kernel", "one single-element kernel")):
            timed, plain_floor = floor[field], floor[f"{field}_noflush"]
            lines.append(
                f"| {what} | {ms(timed['median_ms'])} | {pct(timed['spread'])} | {timed['exposed']} | "
                f"{ms(plain_floor['median_ms'])} | {pct(plain_floor['spread'])} | "
                + (f"{ms(floor['ncu_ms'])} | {ms(floor['ncu_free_ms'])} |" if field == "kernel" else "— | — |")
            )
    errors = [(name, entry["errors"]) for name, entry in summary.items() if entry["errors"]]
    lines += ["", "Errors: " + ("; ".join(f"{name}: {', '.join(e)}" for name, e in errors) if errors else "none")]
    lines += ["Skipped (deadline): " + (", ".join(skipped) if skipped else "nothing")]
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--child":
        task = json.loads(sys.argv[2])
        if task["kind"] == "build":
            print(json.dumps(child_build(task["problem"], task["candidate"])))
        elif task["kind"] == "time":
            child_time(
                task["entries"],
                task["round"],
                task.get("options", {}),
                task.get("bare", False),
                task.get("noflush", False),
                task.get("floor", False),
                task.get("warmup_ms", 0.0),
                task.get("per_call", False),
            )
        elif task["kind"] == "ncu":
            child_ncu(task["problem"], task["candidate"])
        elif task["kind"] == "ncu-floor":
            child_ncu_floor()
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=os.environ.get("OUT"))
    parser.add_argument("--corpus", help="path of a ScalingIntelligence/good-kernels checkout")
    parser.add_argument(
        "--corpus-rows",
        default="",
        help="comma-separated rows of bench/gpu/kernelbench-corpus.tsv to record as published kernels too",
    )
    parser.add_argument("--corpus-root", default=str(ROOT / ".gpu-corpus" / "selected"), help="their folder")
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument("--published-processes", type=int, default=5)
    # Every build at once by default: a build is mostly one nvcc process, so on the H200 host's 16
    # cores 18 builds in 8 lanes took three waves (most of the 2026-12-03 record's 300 s).
    parser.add_argument("--builders", type=int, default=0, help="builds at once (default: all of them)")
    parser.add_argument("--deadline-s", type=float, default=450.0)
    parser.add_argument("--no-ncu", action="store_true")
    parser.add_argument(
        "--ncu-clocks",
        choices=("both", "base", "free"),
        default="both",
        help="ncu's clocks: locked to base (its default), left free (as kforge times), or both",
    )
    parser.add_argument("--knobs", action="store_true")
    parser.add_argument(
        "--warmup-ms",
        type=float,
        default=0.0,
        help="in every timing process, warm each label up for at least this long (TimingOptions.warmup_min_ms)",
    )
    parser.add_argument(
        "--clock-log",
        action="store_true",
        help="log the GPU's SM clock, power and temperature every 100 ms (nvidia-smi, clocks.csv) and keep "
        "every timed call with the host's clock around each label, to set the two side by side",
    )
    parser.add_argument("--bare", action="store_true", help="time each label without the hold too")
    parser.add_argument("--only", default="", help="comma-separated kernel names to record (default: all)")
    parser.add_argument(
        "--floor",
        action="store_true",
        help="in every process, time nothing and a single-element kernel (with and without the flush), and "
        "ncu that kernel: the routine's own overhead at the smallest sizes",
    )
    parser.add_argument("--noflush", action="store_true", help="time each candidate without the flush too")
    parser.add_argument("--no-small", action="store_true", help="leave out the shipped examples' `@small` sizes")
    parser.add_argument(
        "--hold-device-lock",
        action="store_true",
        help="hold kforge's host-wide device lock while timing and profiling (kforge runs beside it wait)",
    )
    args = parser.parse_args()
    if not args.out:
        parser.error("give the output folder (or set $OUT)")
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    deadline = started + args.deadline_s
    rows = [int(row) for row in args.corpus_rows.split(",") if row.strip()]
    found = pairs(args.corpus, rows, args.corpus_root, small=not args.no_small)
    if args.only:
        wanted = set(args.only.split(","))
        found = [entry for entry in found if entry[0] in wanted]
        missing = wanted - {entry[0] for entry in found}
        if missing:
            parser.error(f"no kernel named {', '.join(sorted(missing))}")
    skipped = []
    log = {"builds": {}}
    # Taken before the builds (which run each kernel once), so that `kforge eval` runs started
    # beside the record find the device held from the start and build while it times.
    waited = time.time()
    lock = contextlib.ExitStack()
    lock.enter_context(kforge_device_lock(args.hold_device_lock))
    waited = time.time() - waited
    if args.clock_log:
        lock.enter_context(clock_log(out / "clocks.csv"))
    began = time.time()
    with concurrent.futures.ThreadPoolExecutor(args.builders or max(1, len(found))) as pool:
        jobs = {
            name: pool.submit(run_child, out, {"kind": "build", "problem": p, "candidate": c}, 300)
            for name, p, c, _ in found
        }
        for name, job in jobs.items():
            try:
                done = job.result()
                log["builds"][name] = "ok" if done.returncode == 0 else done.stderr.strip().splitlines()[-1:]
            except subprocess.TimeoutExpired:
                log["builds"][name] = "build timed out"
    log["build_seconds"] = round(time.time() - began, 1)
    usable = [(name, p, c, published) for name, p, c, published in found if log["builds"][name] == "ok"]
    rounds, ncu, knobs = [], {}, {}
    round_seconds = []

    def save(final=False):
        """Writes the record as it stands: after every process and every ncu run, so that a lease
        taken back mid-phase still brings back what was measured (`in_progress` says it is partial)."""
        summary = summarize(found, rounds, ncu, knobs)
        record = {
            "started": started,
            "seconds": time.time() - started,
            "in_progress": not final,
            "builds": log["builds"],
            "build_seconds": log["build_seconds"],
            "round_seconds": round_seconds,
            "device_lock_wait_s": round(waited, 1) if args.hold_device_lock else None,
            "rounds": rounds,
            "ncu_ms": ncu,
            "knobs": knobs,
            "summary": summary,
            "skipped": skipped,
        }
        text = markdown(summary, skipped, started)
        if not final:
            text += (
                f"\nIn progress: written after {len(round_seconds)} timing processes; the record was still running.\n"
            )
        for name, content in (("timing_record.json", json.dumps(record, indent=1)), ("timing_record.md", text)):
            partial = out / f"{name}.part"
            partial.write_text(content)
            partial.replace(out / name)

    def time_rounds(indices):
        for index in indices:
            if time.time() > deadline:
                skipped.append(f"timing process {index + 1}")
                continue
            entries = [
                (name, p, c) for name, p, c, published in usable if not published or index < args.published_processes
            ]
            began = time.time()
            done = run_child(
                out,
                {
                    "kind": "time",
                    "entries": entries,
                    "round": index,
                    "bare": args.bare,
                    "noflush": args.noflush,
                    "floor": args.floor,
                    "warmup_ms": args.warmup_ms,
                    "per_call": args.clock_log,
                },
                max(60.0, deadline - time.time() + 60),
            )
            round_seconds.append(round(time.time() - began, 1))
            rounds.extend(json.loads(line) for line in done.stdout.splitlines() if line.startswith("{"))
            save()

    # The first three processes (with do_bench and the old routine), then ncu, then the other
    # processes: a lease that runs out of time still has each kernel against do_bench and ncu.
    time_rounds(range(min(3, args.processes)))
    if not args.no_ncu and shutil.which("ncu"):
        for name, p, c, _ in usable:
            if time.time() > deadline:
                skipped.append(f"ncu for {name}")
                continue
            runs = [(key, control) for key, control, taken in NCU_RUNS if args.ncu_clocks in taken]
            for key, control in runs:
                try:
                    ncu[key.format(name=name)] = ncu_ms(out, p, c, 120, clock_control=control)
                except subprocess.TimeoutExpired:
                    ncu[key.format(name=name)] = None
                    break
            save()
        if args.floor and time.time() <= deadline:
            try:
                ncu[FLOOR] = ncu_ms(out, None, None, 120)
                ncu[f"{FLOOR} (clocks free)"] = ncu_ms(out, None, None, 120, clock_control="none")
            except subprocess.TimeoutExpired:
                ncu[FLOOR] = None
    elif not args.no_ncu:
        skipped.append("ncu (not on PATH)")
    time_rounds(range(3, args.processes))
    if args.knobs:
        shipped = [(name, p, c) for name, p, c, published in usable if not published]
        for knob, options in KNOBS.items():
            for index in range(3):
                if time.time() > deadline:
                    skipped.append(f"knob {knob}, process {index + 1}")
                    continue
                done = run_child(
                    out, {"kind": "time", "entries": shipped, "round": 10 + index, "options": options}, 300
                )
                knobs.setdefault(knob, []).extend(
                    json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")
                )
    lock.close()
    save(final=True)
    print((out / "timing_record.md").read_text())


if __name__ == "__main__":
    main()
