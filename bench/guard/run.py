"""What the guard's run-time checks cost: whole evaluations with the checks on and off.

    /usr/bin/python3 bench/guard/run.py                       # cpu, three shipped cpu_fast examples
    python3 bench/guard/run.py --backend cuda --repeats 3 \\
        examples/level1_02_gelu/cuda_fast.py examples/level1_08_rms_norm/cuda_fast.py \\
        examples/level2_01_gemm_bias_gelu/cuda_fast.py       # on a GPU host

Each evaluation drives both worker processes through their real protocol, as the TypeScript parent
does (worker/tests/worker_process.py: reference and candidate side by side, correctness judged,
timed calls, sampled timed outputs judged), with the parent's defaults: 5 correctness seeds, 3
timing seeds, 10 warm-up and 100 timed calls, 3 sampled calls, atol = rtol = 1e-2, no baselines
(the parent caches them; they are no part of the guard). "off" sets KFORGE_GUARD_RUNTIME=off in the
candidate worker's environment (kforge_worker/guard/guard_settings.py): no allocator poison, no output,
thread, device-error, global-state or timer checks, no dispatch trace of forward, and one input set
per timed model instead of fresh contents refilled before every call. The static guard, the
reference role (degenerate audit, roofline) and the judge run in both modes; the static guard's and
the degenerate audit's own times are measured separately, in process. A run with the checks off is
not a verdict: its `guard-checks` messages say so.

Per example: one untimed evaluation first builds the extension into a build directory shared by
every run (later runs are build-cache hits), then `--repeats` rounds of one "on" and one "off"
evaluation, alternating which goes first. Prints a Markdown table of medians and writes every run
to `--out` (JSON).
"""

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "worker" / "tests"))
sys.path.insert(0, str(ROOT / "worker"))

from verdicts import verdict  # noqa: E402
from worker_process import evaluate  # noqa: E402

from kforge_worker.problem.problem_loader import load_problem  # noqa: E402
from kforge_worker.roles.reference_store import ReferenceStore  # noqa: E402
from kforge_worker.guard.static import analyze_file  # noqa: E402
from kforge_worker.tolerance.tolerance_audit import ToleranceAudits  # noqa: E402

DEFAULT_EXAMPLES = (
    "examples/level1_02_gelu/cpu_fast.py",
    "examples/level1_08_rms_norm/cpu_fast.py",
    "examples/level2_01_gemm_bias_gelu/cpu_fast.py",
)
CANDIDATE_STAGES = ("build", "load", "correctness", "timing")
REFERENCE_STAGES = ("reference", "judge")
SETTINGS = dict(
    correctness_seeds=(11, 12, 13, 14, 15),
    timing_seeds=(21, 22, 23),
    perf_trials=100,
    warmup_trials=10,
    sample_calls=(7, 42, 91),
)


def problem_of(candidate: Path) -> Path:
    """examples/level1_02_gelu/cpu_fast.py -> problems/level1/02_gelu.py"""
    level, _, name = candidate.parent.name.partition("_")
    return ROOT / "problems" / level / f"{name}.py"


def backend_of(candidate: Path, requested: str) -> str:
    return "triton" if requested != "cpu" and candidate.name.startswith("triton_") else requested


def stage_times(result) -> Dict[str, float]:
    """Stage durations in ms; a stage that ran more than once (judge) is summed."""
    times: Dict[str, float] = {}
    for role in ("reference", "candidate"):
        for message in getattr(result, role).of_type("stage"):
            if message["status"] == "end":
                times[message["stage"]] = times.get(message["stage"], 0.0) + message["duration_ms"]
    return times


def one_run(
    problem: Path,
    candidate: Path,
    work: Path,
    build_dir: Path,
    mode: str,
    backend: str,
    device: str,
    preset: str,
    timing: bool = True,
) -> dict:
    env = {"KFORGE_GUARD_RUNTIME": mode}
    started, cpu_before = time.perf_counter(), _children_cpu_s()
    result = evaluate(
        problem,
        candidate,
        work,
        build_dir,
        guard=None,
        run_timing=timing,
        candidate_env=env,
        backend=backend,
        device=device,
        preset=preset,
        **SETTINGS,
    )
    wall_s, cpu_s = time.perf_counter() - started, _children_cpu_s() - cpu_before
    found, check = verdict(result)
    notes = [
        entry
        for message in result.candidate.of_type("guard-checks")
        for entry in message["checks"]
        if entry["check"] in ("guard-runtime", "torch-fallback")
    ]
    times_ms = (result.timing or {}).get("times_ms") or []
    return {
        "mode": mode,
        "wall_s": round(wall_s, 3),
        "cpu_s": round(cpu_s, 3),
        "verdict": found,
        "check": check,
        "stages_ms": stage_times(result),
        "median_call_ms": statistics.median(times_ms) if times_ms else None,
        "contents_per_model": (result.timing or {}).get("contents_per_model"),
        "guard_notes": notes,
        "guard_runtime": "off" if mode == "off" else "on",
        **({} if found == "correct" else _why(result)),
    }


def _why(result) -> dict:
    """What a run that did not end `correct` left behind: the failure's message, the workers' exit
    codes and the tails of their stderr (so a record explains itself)."""
    failure = next((result.failures[role] for role in ("candidate", "reference") if role in result.failures), None)
    return {
        "failure_message": (failure or {}).get("message", "")[:2000],
        "exit_codes": dict(result.exit_codes),
        "stderr_tail": {role: getattr(result, role).stderr[-2000:] for role in ("reference", "candidate")},
    }


def _children_cpu_s() -> float:
    """User + system CPU seconds of the finished worker processes so far (both roles)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def static_guard_ms(candidate: Path, repeats: int = 5) -> float:
    durations = []
    for _ in range(repeats):
        started = time.perf_counter()
        analyze_file(str(candidate))
        durations.append((time.perf_counter() - started) * 1e3)
    return statistics.median(durations)


def audit_ms(problem: Path, preset: str, device: str) -> float:
    """The degenerate-tolerance audit of the reference role (judge layer, docs/hacks.md #12) over the
    correctness references, timed in process: it runs inside stage `reference` in both modes."""
    import torch

    store = ReferenceStore(load_problem(str(problem), preset), torch.device(device), torch.float32)
    kept: List = []
    references = [store.compute(seed, keep_inputs=kept).output.leaves for seed in SETTINGS["correctness_seeds"]]
    started = time.perf_counter()
    ToleranceAudits(references, kept).audit(1e-2, 1e-2)
    return (time.perf_counter() - started) * 1e3


def median_of(runs: List[dict], key) -> Optional[float]:
    values = [key(run) for run in runs if key(run) is not None]
    return statistics.median(values) if values else None


def table(report: dict) -> str:
    columns = ["wall s", "cpu s"] + [f"{name} ms" for name in REFERENCE_STAGES + CANDIDATE_STAGES] + ["call ms"]
    lines = ["| example | guard | verdict | " + " | ".join(columns) + " |", "|---|---|---|" + "---:|" * len(columns)]
    for example in report["examples"]:
        for mode in ("on", "off"):
            runs = [run for run in example["runs"] if run["mode"] == mode]
            cells = [median_of(runs, lambda run: run["wall_s"]), median_of(runs, lambda run: run.get("cpu_s"))]
            cells += [
                median_of(runs, lambda run, name=name: run["stages_ms"].get(name))
                for name in REFERENCE_STAGES + CANDIDATE_STAGES
            ]
            cells.append(median_of(runs, lambda run: run["median_call_ms"]))
            verdicts = ",".join(sorted({run["verdict"] for run in runs}))
            text = ["—" if cell is None else f"{cell:.3g}" if cell < 10 else f"{cell:.0f}" for cell in cells]
            lines.append(f"| {example['candidate']} | {mode} | {verdicts} | " + " | ".join(text) + " |")
        lines.append(
            f"| {example['candidate']} | on / off | | {example['wall_ratio']:.2f}x | "
            f"{example['cpu_ratio']:.2f}x | " + " | ".join("" for _ in columns[2:]) + " |"
        )
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("candidates", nargs="*", default=list(DEFAULT_EXAMPLES))
    parser.add_argument("--backend", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--device", default=None, help="cpu or cuda:N (default: cpu, or cuda:0 on cuda)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--work", default=None, help="scratch folder (default: a new temporary one)")
    parser.add_argument("--out", default=None, help="JSON file for every run (default: WORK/guard-cost.json)")
    args = parser.parse_args(argv)
    device = args.device or ("cpu" if args.backend == "cpu" else "cuda:0")
    preset = "cpu" if args.backend == "cpu" else "gpu"
    work = Path(args.work or tempfile.mkdtemp(prefix="kforge-guard-bench-"))
    build_dir = work / "build"
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "host": platform.node(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_before": os.getloadavg(),
        },
        "settings": {
            **SETTINGS,
            "backend": args.backend,
            "device": device,
            "preset": preset,
            "repeats": args.repeats,
            "baselines": None,
            "policy": "default",
        },
        "examples": [],
    }
    for name in args.candidates:
        candidate = (ROOT / name).resolve()
        problem, backend = problem_of(candidate), backend_of(candidate, args.backend)
        label = str(candidate.relative_to(ROOT))
        base = work / candidate.parent.name / candidate.stem
        first = one_run(problem, candidate, base / "build-run", build_dir, "on", backend, device, preset, timing=False)
        print(
            f"{label}: first build {first['stages_ms'].get('build', 0) / 1e3:.1f} s, verdict {first['verdict']}",
            flush=True,
        )
        runs = []
        for index in range(args.repeats):
            for mode in ("on", "off") if index % 2 == 0 else ("off", "on"):
                run = one_run(problem, candidate, base / f"{mode}-{index}", build_dir, mode, backend, device, preset)
                runs.append(run)
                print(f"  {mode:3s} #{index}: {run['wall_s']:.2f} s, verdict {run['verdict']}", flush=True)
        ratios = {}
        for key in ("wall_s", "cpu_s"):
            on = median_of([run for run in runs if run["mode"] == "on"], lambda run: run[key])
            off = median_of([run for run in runs if run["mode"] == "off"], lambda run: run[key])
            ratios[key] = on / off if on and off else float("nan")
        report["examples"].append(
            {
                "candidate": label,
                "problem": str(problem.relative_to(ROOT)),
                "first_build": first,
                "static_guard_ms": round(static_guard_ms(candidate), 2),
                "audit_ms": round(audit_ms(problem, preset, device), 1),
                "runs": runs,
                "wall_ratio": ratios["wall_s"],
                "cpu_ratio": ratios["cpu_s"],
            }
        )
    report["machine"]["load_after"] = os.getloadavg()
    out = Path(args.out) if args.out else work / "guard-cost.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(table(report))
    for example in report["examples"]:
        print(
            f"{example['candidate']}: static guard {example['static_guard_ms']:.1f} ms (median of 5), "
            f"degenerate audit {example['audit_ms'] / 1e3:.2f} s (in process, both in every mode)"
        )
    print(f"runs written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
