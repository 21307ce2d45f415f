"""What the candidate's sandbox costs: whole evaluations with the sandbox on and off.

    /usr/bin/python3 bench/sandbox/run.py --repeats 3 --out sandbox-cost.json          # cpu
    python3 bench/sandbox/run.py --backend cuda --repeats 3 --out $OUT/sandbox-h200.json \\
        examples/level1_02_gelu/cuda_fast.py                                             # on a GPU host

Each evaluation drives both worker processes through their real protocol (worker/tests/
worker_process.py), with the parent's defaults (5 correctness seeds, 3 timing seeds, 10 warm-up
and 100 timed calls, 3 sampled calls, no baselines). "on" starts both roles as the TypeScript
parent does (`python3 -I -B -u worker/kforge_bootstrap.py ... ROLE`: namespaces, cgroup, the
candidate's read-only view, own uid, seccomp); "off" starts `python3 -m kforge_worker ROLE` with the
same scrubbed environment. Both build through one stable path linked to the run's own scratch
build folder (as the parent's build cache does), into which a first untimed evaluation's build is
copied with its modification times: every measured run is a build-cache hit.

Also timed, `--probes` times each: the sandbox alone (`kforge_bootstrap.py probe`: cgroup,
namespaces, view, uid, seccomp, no torch) against `python3 -I -c pass`.

Prints a Markdown table of medians and writes every run to `--out` (JSON).
"""

import argparse
import datetime
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "worker" / "tests"))
sys.path.insert(0, str(ROOT / "worker"))

from sandbox_support import SandboxLauncher, stage_problem  # noqa: E402
from verdicts import verdict  # noqa: E402
from worker_process import WORKER_ROOT, evaluate  # noqa: E402

SETTINGS = dict(
    correctness_seeds=(11, 12, 13, 14, 15),
    timing_seeds=(21, 22, 23),
    perf_trials=100,
    warmup_trials=10,
    sample_calls=(7, 42, 91),
)
STAGES = ("build", "load", "correctness", "timing", "reference", "judge")


def plain_launcher(role, cwd):
    """`python3 -m kforge_worker ROLE` with the environment the sandboxed run gets."""
    command, environment = SandboxLauncher()(role, cwd)
    return [sys.executable, "-m", "kforge_worker", role], {
        **environment,
        "PYTHONPATH": str(WORKER_ROOT),
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def one_run(problem, candidate, work, staging, built, mode, backend, launcher_on):
    work.mkdir(parents=True)
    scratch = work / "scratch"
    launcher = launcher_on if mode == "on" else plain_launcher
    launcher("candidate", scratch)
    if built is not None and built.exists():
        shutil.rmtree(scratch / "build")
        shutil.copytree(built, scratch / "build", symlinks=True)
    if staging.is_symlink():
        staging.unlink()
    staging.symlink_to(scratch / "build")
    problem_copy = stage_problem(problem, scratch)
    folder = scratch / "in" / "candidate"
    folder.mkdir(parents=True, exist_ok=True)
    candidate_copy = folder / candidate.name
    shutil.copyfile(candidate, candidate_copy)
    device = "cuda:0" if backend == "cuda" else "cpu"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = evaluate(
        problem_copy,
        candidate_copy,
        work,
        staging,
        launcher=launcher,
        backend=backend,
        device=device,
        preset="gpu" if backend == "cuda" else "cpu",
        guard=None,
        **SETTINGS,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    stages = {}
    for role in (result.reference, result.candidate):
        for message in role.of_type("stage"):
            if message["status"] == "end":
                stages[message["stage"]] = stages.get(message["stage"], 0.0) + message["duration_ms"] / 1000
    hello = result.message("candidate", "hello") or {}
    return {
        "mode": mode,
        "verdict": list(verdict(result)),
        "wall_s": wall,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "stages_s": stages,
        "isolation": hello.get("environment", {}).get("isolation"),
        "median_call_ms": statistics.median(result.timing["times_ms"])
        if result.timing and result.timing.get("type") == "timing"
        else None,
    }


def probes(count):
    scratch = Path(tempfile.mkdtemp(prefix="kforge-probe-"))
    (scratch / "in").mkdir()
    sandbox = [
        sys.executable,
        "-I",
        "-B",
        "-u",
        str(WORKER_ROOT / "kforge_bootstrap.py"),
        "--writable",
        str(scratch),
        "--read-only",
        str(scratch / "in"),
        "--hide",
        str(Path.home()),
        "probe",
    ]
    timings = {"sandbox_probe_s": [], "python_start_s": []}
    for _ in range(count):
        for key, command in (("sandbox_probe_s", sandbox), ("python_start_s", [sys.executable, "-I", "-c", "pass"])):
            started = time.perf_counter()
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            timings[key].append(time.perf_counter() - started)
    shutil.rmtree(scratch)
    return timings


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("examples", nargs="*", default=["examples/level1_02_gelu/cpu_fast.py"])
    parser.add_argument("--backend", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--probes", type=int, default=10)
    parser.add_argument("--work", default=None)
    parser.add_argument("--out", default=None)
    options = parser.parse_args()
    work = Path(options.work or tempfile.mkdtemp(prefix="kforge-sandbox-bench-"))
    for folder in [work, *work.parents]:
        if str(folder) != "/":
            os.chmod(folder, os.stat(folder).st_mode | 0o005)
    staging_folder = work / "staging"
    staging_folder.mkdir(parents=True, exist_ok=True)
    hidden = [Path.home()]
    launcher_on = SandboxLauncher(hide=hidden, expose=[staging_folder])
    record = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "host": platform.node(),
        "python": sys.version.split()[0],
        "backend": options.backend,
        "load_before": os.getloadavg(),
        "examples": {},
    }
    for example in options.examples:
        candidate = ROOT / example
        problem_name = candidate.parent.name.split("_", 2)
        problem = next((ROOT / "problems" / f"level{problem_name[0][-1]}").glob(f"{problem_name[1]}_*.py"))
        staging = staging_folder / candidate.parent.name
        first = one_run(
            problem,
            candidate,
            work / f"{candidate.parent.name}-build",
            staging,
            None,
            "on",
            options.backend,
            launcher_on,
        )
        built = work / f"{candidate.parent.name}-built"
        shutil.copytree(work / f"{candidate.parent.name}-build" / "scratch" / "build", built, symlinks=True)
        runs = []
        for index in range(options.repeats):
            for mode in ("on", "off") if index % 2 == 0 else ("off", "on"):
                runs.append(
                    one_run(
                        problem,
                        candidate,
                        work / f"{candidate.parent.name}-{index}-{mode}",
                        staging,
                        built,
                        mode,
                        options.backend,
                        launcher_on,
                    )
                )
                print(
                    f"{example} {mode}: {runs[-1]['wall_s']:.2f} s wall, "
                    f"build {runs[-1]['stages_s'].get('build', 0):.2f} s, "
                    f"{runs[-1]['verdict']}",
                    file=sys.stderr,
                )
        record["examples"][example] = {"first": first, "runs": runs}
    record["probes"] = probes(options.probes)
    record["load_after"] = os.getloadavg()
    print("| example | mode | wall s | cpu s | " + " | ".join(STAGES) + " | call ms |")
    print("|---|---|---|---|" + "---|" * len(STAGES) + "---|")
    for example, data in record["examples"].items():
        for mode in ("on", "off"):
            runs = [run for run in data["runs"] if run["mode"] == mode]
            median = lambda pick: statistics.median(pick(run) for run in runs)  # noqa: E731
            cells = [f"{median(lambda run: run['stages_s'].get(stage, 0.0)):.2f}" for stage in STAGES]
            call = median(lambda run: run["median_call_ms"] or 0.0)
            print(
                f"| {example} | {mode} | {median(lambda run: run['wall_s']):.2f} | "
                f"{median(lambda run: run['cpu_s']):.2f} | " + " | ".join(cells) + f" | {call:.4f} |"
            )
    for key, values in record["probes"].items():
        print(f"\n{key}: median {statistics.median(values) * 1000:.0f} ms over {len(values)}")
    if options.out:
        Path(options.out).write_text(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
