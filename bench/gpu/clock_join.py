"""Sets a timing record's processes beside the GPU's clock log: whether the medians that moved
between processes moved with the SM clock.

    python3 bench/gpu/clock_join.py RECORD_DIR [--detail]

RECORD_DIR holds `timing_record.json` and `clocks.csv` (or `clocks.csv.gz`) of
`timing_record.py --clock-log`: every timed call of every label with the host's clock around the
label's routine, and nvidia-smi's samples every 100 ms led by the host's clock. For each kernel and
label it prints the spread of the per-process medians (max/min - 1) over all processes and over
those whose routine ran with no clock event (the SM clock at its highest the whole time), the SM
clock and power seen, the clock-event reasons seen, and how far the first 20 timed calls of a
process sat from its last 20. With `--detail`, a line per process as well.
"""

import argparse
import csv
import gzip
import io
import json
import statistics
from pathlib import Path

from timing_record import spread  # bench/gpu, beside this file

#: nvidia-smi's clocks_event_reasons bits (nvidia-smi --help-query-gpu).
REASONS = {
    0x1: "idle",
    0x2: "applications clocks",
    0x4: "software power cap",
    0x8: "hardware slowdown",
    0x10: "sync boost",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "power brake",
}


def read_clocks(folder):
    path = folder / "clocks.csv"
    if path.exists():
        text = path.read_text()
    else:
        text = gzip.decompress((folder / "clocks.csv.gz").read_bytes()).decode()
    samples = []
    for row in csv.reader(io.StringIO(text)):
        try:
            reasons = int(row[5].strip(), 16) if len(row) > 5 else 0
            samples.append({"time": float(row[0]), "sm": float(row[1]), "power": float(row[3]), "reasons": reasons})
        except (ValueError, IndexError):
            continue  # the header, or a line nvidia-smi could not fill
    return samples


def percent(value):
    return "—" if value is None else f"{value * 100:.2f}%"


def describe(bits):
    names = [name for bit, name in REASONS.items() if bits & bit and bit != 0x1]
    return ", ".join(names) or "none"


def join(record, samples):
    """Per kernel and label: one entry per process with its median, the clock samples during its
    routine and its first and last 20 calls."""
    table = {}
    for row in sorted(record["rounds"], key=lambda row: row["round"]):
        for label in ("candidate", "eager", "compile"):
            span = row.get(f"{label}_span")
            calls = row.get(f"{label}_calls_ms")
            if not span or not calls:
                continue
            during = [sample for sample in samples if span[0] <= sample["time"] <= span[1]]
            bits = 0
            for sample in during:
                bits |= sample["reasons"]
            table.setdefault((row["name"], label), []).append(
                {
                    "round": row["round"],
                    "median": row[f"{label}_ms"],
                    "sm": [sample["sm"] for sample in during],
                    "power": [sample["power"] for sample in during],
                    "reasons": bits,
                    "first": statistics.median(calls[:20]),
                    "last": statistics.median(calls[-20:]),
                }
            )
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--detail", action="store_true", help="a line per process too")
    args = parser.parse_args()
    record = json.loads((args.folder / "timing_record.json").read_text())
    samples = read_clocks(args.folder)
    table = join(record, samples)
    if not table:
        raise SystemExit(f"{args.folder}: no per-call figures (record it with timing_record.py --clock-log)")
    top = max(sample["sm"] for sample in samples)
    print(f"{len(samples)} clock samples; the highest SM clock seen: {top:.0f} MHz\n")
    print(
        "| kernel | label | processes | spread | processes at full clock | their spread | SM clock (MHz) "
        "| power (W) | clock events | first 20 / last 20 calls |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (name, label), processes in table.items():
        medians = [process["median"] for process in processes]
        steady = [
            process["median"]
            for process in processes
            if process["sm"] and min(process["sm"]) >= top and not process["reasons"] & ~0x1
        ]
        clocks = [value for process in processes for value in process["sm"]]
        power = [value for process in processes for value in process["power"]]
        bits = 0
        for process in processes:
            bits |= process["reasons"]
        drift = [process["first"] / process["last"] - 1 for process in processes]
        print(
            f"| {name} | {label} | {len(processes)} | {percent(spread(medians))} | {len(steady)} "
            f"| {percent(spread(steady))} | {min(clocks, default=0):.0f}–{max(clocks, default=0):.0f} "
            f"| {min(power, default=0):.0f}–{max(power, default=0):.0f} | {describe(bits)} "
            f"| {min(drift) * 100:+.2f}% to {max(drift) * 100:+.2f}% |"
        )
    if args.detail:
        print(
            "\n| kernel | label | process | median ms | mean SM clock | most power | clock events "
            "| first 20 | last 20 |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for (name, label), processes in table.items():
            for process in processes:
                clock = statistics.mean(process["sm"]) if process["sm"] else 0
                print(
                    f"| {name} | {label} | {process['round'] + 1} | {process['median']:.4f} | {clock:.0f} "
                    f"| {max(process['power'], default=0):.0f} | {describe(process['reasons'])} "
                    f"| {process['first']:.4f} | {process['last']:.4f} |"
                )


if __name__ == "__main__":
    main()
