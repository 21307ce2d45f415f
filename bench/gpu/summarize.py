"""Turns a results-*.jsonl file of bench/gpu/eval-h200.sh into a markdown table.

Each line: {"candidate", "tag", "wall_s", "result": <kforge eval --json>}. Columns: verdict, first
reason, candidate / eager / compile medians with the candidate's 95% interval, speedups, per-stage
wall times (ms) and the process's wall time (s). For several runs of one candidate it also gives
the spread of the medians ((max − min) / min) and their coefficient of variation.
"""
import json
import statistics
import sys


def median_of(timing, key):
    entry = (timing or {}).get(key) or {}
    return entry.get("median")


def cell(value, digits=3):
    return "—" if value is None else f"{value:.{digits}g}"


def main(path):
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    print(
        "| candidate | run | verdict | reason | candidate ms [95% CI] | eager ms | compile ms | vs eager | vs compile "
        "| stages (ms) | wall s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    medians = {}
    for row in rows:
        result = row["result"]
        timing = result.get("timing")
        candidate = (timing or {}).get("candidate_ms") or {}
        interval = candidate.get("ci95")
        reason = (result.get("reasons") or [{}])[0]
        stages = " · ".join(f"{name} {value:.0f}" for name, value in (result.get("stages") or {}).items())
        interval_text = f" [{cell(interval[0])}, {cell(interval[1])}]" if interval else ""
        print(
            f"| {row['candidate']} | {row['tag']} | {result.get('verdict')} | {reason.get('check', '')} "
            f"| {cell(candidate.get('median'))}{interval_text} | {cell(median_of(timing, 'eager_ms'))} "
            f"| {cell(median_of(timing, 'compile_ms'))} | {cell((timing or {}).get('speedup_vs_eager'))} "
            f"| {cell((timing or {}).get('speedup_vs_compile'))} | {stages} | {row['wall_s']:.1f} |"
        )
        if candidate.get("median") is not None:
            medians.setdefault(row["candidate"], []).append(candidate["median"])
    for name, values in medians.items():
        if len(values) > 1:
            spread = (max(values) - min(values)) / min(values)
            cv = statistics.stdev(values) / statistics.mean(values)
            print(
                f"\n{name}: {len(values)} runs, medians {', '.join(f'{v:.4g}' for v in values)} ms; "
                f"spread {spread:.2%}, CV {cv:.2%}"
            )


if __name__ == "__main__":
    main(sys.argv[1])
