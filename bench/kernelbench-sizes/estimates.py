"""The memory estimate of every KernelBench problem at its own sizes, without allocating anything:
how many a device can evaluate at once, and which problems the estimate cannot size.

    cd worker && python3 ../bench/kernelbench-sizes/estimates.py KB/KernelBench [--device-type cuda]
        [--capacity-gib 139] [--levels 1,2,3] [--json]

KB is a KernelBench checkout. Each problem goes through the worker's own estimate (what `kforge
eval` does before it takes the device; docs/sizes.md): its inputs, model and forward under
FakeTensorMode. Prints one line per problem (level, file, how its forward was sized: `fake`, or
`assumed` where the fake mode could not run it, the estimate, one input set and the output, in GiB)
and a summary: counts by method, problems that could not be loaded, the largest estimates, and how
many problems would not fit `--capacity-gib` on their own.
"""

import argparse
import glob
import json
import os
import statistics
import sys
import time
from collections import Counter

from kforge_worker.protocol.errors import StageFailure
from kforge_worker.roles.estimate_command import estimate

GIB = 1024**3


def sweep(kernelbench: str, levels, device_type: str):
    for level in levels:
        for path in sorted(glob.glob(os.path.join(kernelbench, f"level{level}", "*.py"))):
            started = time.perf_counter()
            row = {"level": level, "file": os.path.basename(path)}
            try:
                figures = estimate(path, None, "fp32", device_type, {}, True)
                row.update(
                    method=figures["forward_method"],
                    estimate_gib=figures["evaluation_bytes"] / GIB,
                    input_gib=figures["input_bytes"] / GIB,
                    output_gib=figures["output_bytes"] / GIB,
                    why=figures.get("forward_error"),
                )
            except StageFailure as failure:
                row.update(method="error", why=str(failure))
            row["seconds"] = time.perf_counter() - started
            yield row


def main(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernelbench", help="the KernelBench folder holding level1, level2, …")
    parser.add_argument("--device-type", choices=("cpu", "cuda"), default="cuda")
    parser.add_argument("--capacity-gib", type=float, default=139.0)
    parser.add_argument("--levels", default="1,2,3")
    parser.add_argument("--json", action="store_true", help="one JSON object per problem, then the summary")
    arguments = parser.parse_args(argv)
    rows = []
    for row in sweep(
        arguments.kernelbench, [int(level) for level in arguments.levels.split(",")], arguments.device_type
    ):
        rows.append(row)
        if arguments.json:
            print(json.dumps(row), flush=True)
        elif row["method"] == "error":
            print(f"level{row['level']} {row['file']}: not sized: {row['why'][:160]}", flush=True)
        else:
            why = f"  ({row['why'][:100]})" if row["why"] else ""
            print(
                f"level{row['level']} {row['file']}: {row['method']} {row['estimate_gib']:.1f} GiB"
                f" (input {row['input_gib']:.2f}, output {row['output_gib']:.2f}){why}",
                flush=True,
            )
    sized = [row for row in rows if row["method"] != "error"]
    largest = sorted(sized, key=lambda row: -row["estimate_gib"])[:5]
    summary = {
        "problems": len(rows),
        "methods": dict(Counter(row["method"] for row in rows)),
        "median_gib": statistics.median(row["estimate_gib"] for row in sized) if sized else None,
        "at_least_20_gib": sum(row["estimate_gib"] >= 20 for row in sized),
        "at_least_40_gib": sum(row["estimate_gib"] >= 40 for row in sized),
        "over_capacity": [row["file"] for row in sized if row["estimate_gib"] > arguments.capacity_gib],
        "largest": [(f"level{row['level']}/{row['file']}", round(row["estimate_gib"], 1)) for row in largest],
        "seconds": round(sum(row["seconds"] for row in rows), 1),
    }
    print(json.dumps(summary) if arguments.json else "summary: " + json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
