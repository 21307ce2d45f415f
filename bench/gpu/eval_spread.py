"""The table of bench/gpu/eval_spread.sh's runs: for each example, its ten `kforge eval` results
side by side (verdicts, the candidate's, eager's and torch.compile's medians and their spread over
the runs, the speedup, the cross-check's ratios, the candidate's warm-up).

    python3 bench/gpu/eval_spread.py DIR [DIR…]

Spread: max/min - 1 of the per-run medians (timing_record.spread). A run without a timing (a
verdict other than `correct`, or no JSON) is counted and left out of the figures.
"""

import json
import sys
from pathlib import Path

from timing_record import spread  # bench/gpu, beside this file


def parsed(text: str):
    """`kforge eval --json`'s one line, or a verdict kept indented (bench/gpu/results); None when
    there is none."""
    for candidate in (text, text.splitlines()[-1] if text else ""):
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    return None


def load_runs(folder: Path):
    runs = []
    for path in sorted(folder.glob("eval-*.json"), key=lambda item: int(item.stem.split("-")[1])):
        runs.append(parsed(path.read_text().strip()))
    return runs


def median_of(timing, key):
    figure = timing.get(key)
    return None if not figure else figure["median"]


def span(values, digits=4):
    values = [value for value in values if value is not None]
    if not values:
        return "—"
    low, high = min(values), max(values)
    return f"{low:.{digits}f}" if low == high else f"{low:.{digits}f}–{high:.{digits}f}"


def percent(values):
    figure = spread(values)  # None with fewer than two figures
    return "—" if figure is None else f"{figure * 100:.2f}%"


def row(name, runs):
    timed = [run["timing"] for run in runs if run and run.get("timing")]
    verdicts = {}
    for run in runs:
        verdict = run["verdict"] if run else "no result"
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    candidate = [median_of(timing, "candidate_ms") for timing in timed]
    eager = [median_of(timing, "eager_ms") for timing in timed]
    compiled = [median_of(timing, "compile_ms") for timing in timed]
    checks = [timing.get("cross_check") or {} for timing in timed]
    budgets = [timing.get("budget") or {} for timing in timed]
    return [
        name,
        ", ".join(f"{count} {verdict}" for verdict, count in sorted(verdicts.items())),
        span(candidate),
        percent(candidate),
        span(eager),
        percent(eager),
        span(compiled),
        percent(compiled),
        span([timing.get("speedup_vs_best") for timing in timed], 3),
        span([check.get("ratio") for check in checks], 3),
        span([(check.get("kernels") or {}).get("ratio") for check in checks], 3),
        span([budget.get("warmup_calls") for budget in budgets], 0),
        span([budget.get("warmup_ms") for budget in budgets], 0),
    ]


HEADER = [
    "example",
    "runs",
    "candidate ms",
    "spread",
    "eager ms",
    "spread",
    "compile ms",
    "spread",
    "speedup vs best",
    "cross-check: back-to-back events",
    "cross-check: kernels (CUPTI)",
    "warm-up calls",
    "warm-up ms",
]


def main(folders):
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    for folder in map(Path, folders):
        for example in sorted(path for path in folder.iterdir() if path.is_dir()):
            runs = load_runs(example)
            if runs:
                print("| " + " | ".join(str(cell) for cell in row(example.name, runs)) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
