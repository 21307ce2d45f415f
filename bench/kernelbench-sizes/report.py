"""The record of bench/gpu/kernelbench_sizes.sh: `python3 bench/kernelbench-sizes/report.py OUT`
prints Markdown (and writes OUT/result.json): per evaluation the problem, the verdict and its first
reason, the estimate and each role's device peak; the batch's wall time and candidates per GPU-hour;
the eight concurrent processes' exit statuses and verdicts beside the batch's. Flags what the issue
forbids: an evaluation whose verdict names the machine (the reference, kforge's own code, a worker
that could not start) and any evaluation without a verdict."""

import json
import os
import sys

GIB = 1024**3
MACHINE_WORDS = (
    "reference process",
    "could not start",
    "before saying hello",
    "ran out of device memory",
    "ran out of host memory",
    "kforge's own code",
)


def load_lines(path):
    rows = []
    if not os.path.isfile(path):
        return rows
    for line in open(path):
        line = line.strip()
        if line:
            try:
                rows.append(json.loads(line))
            except ValueError:
                rows.append({"unparsed": line[:200]})
    return rows


def gib(value):
    return "–" if not value else f"{value / GIB:.1f}"


def peak(result, role):
    memory = (result.get("memory") or {}).get(role) or {}
    return memory.get("device_peak_bytes")


def blames_machine(result):
    text = " ".join(reason.get("message", "") for reason in result.get("reasons", []))
    return result.get("verdict") in ("crashed", "timeout", "runtime_error") and any(
        word in text for word in MACHINE_WORDS
    )


def status_of(path):
    return open(path).read().strip() if os.path.isfile(path) else "missing"


def stage_peaks(result):
    """`role: stage peak, ...` in GiB of one result's device peaks (host peaks where there is no device)."""
    parts = []
    for role in ("reference", "candidate"):
        stages = ((result.get("memory") or {}).get(role) or {}).get("stages") or {}
        figures = ", ".join(
            f"{stage} {gib(peaks.get('device_peak_bytes') or peaks.get('host_peak_bytes'))}"
            for stage, peaks in stages.items()
        )
        parts.append(f"{role}: {figures or '–'}")
    return "; ".join(parts)


def single_lines(out):
    """Phase 0: one pair alone on the device, with its stage peaks."""
    rows = load_lines(os.path.join(out, "single.json"))
    if not rows:
        return []
    row = rows[0]
    estimate = gib((row.get("memory") or {}).get("estimate_bytes"))
    return [
        f"Alone: {os.path.basename(str(row.get('problem', '?')))}, {status_of(os.path.join(out, 'single.status'))}",
        f"verdict {row.get('verdict', 'none')}; estimate {estimate} GiB; stage peaks GiB: {stage_peaks(row)}",
        "",
    ]


def main(out):
    batch = load_lines(os.path.join(out, "batch.jsonl"))
    verdicts = [row for row in batch if "verdict" in row]
    missing = [row for row in batch if "error" in row]
    wall = status_of(os.path.join(out, "batch.status"))
    wall_s = float(wall.split("wall_s=")[1]) if "wall_s=" in wall else None
    evaluated = len(verdicts)
    parts = (
        [line.split() for line in open(os.path.join(out, "batch.parts"))]
        if os.path.exists(os.path.join(out, "batch.parts"))
        else []
    )
    if len(parts) > 1:  # a batch finished over several runs (--resume): its wall time and candidates are theirs, summed
        fields = [dict(item.split("=", 1) for item in part) for part in parts]
        wall_s = sum(float(field["wall_s"]) for field in fields)
        evaluated = sum(int(field["evaluated"]) for field in fields)
        wall = f"{len(parts)} runs (--resume): " + "; ".join(" ".join(part) for part in parts)
    lines = [
        "# KernelBench at its own sizes, one GPU",
        "",
        f"GPU: {status_of(os.path.join(out, 'gpu.csv')).splitlines()[-1]}",
        "",
        *single_lines(out),
        f"Batch: {len(batch)} candidates ({len(verdicts)} verdicts, {len(missing)} without), {wall}",
        f"candidates per GPU-hour: {evaluated / wall_s * 3600:.0f}" if wall_s else "",
        "",
        "| problem | verdict | first reason | estimate GiB | reference peak GiB | candidate peak GiB"
        " | overrides | GPU |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in batch:
        name = os.path.basename(str(row.get("problem", "?")))
        if "verdict" in row:
            reason = (row.get("reasons") or [{}])[0].get("message", "")[:90].replace("|", "/")
            lines.append(
                f"| {name} | {row['verdict']}{' (MACHINE BLAMED)' if blames_machine(row) else ''} | {reason} | "
                f"{gib((row.get('memory') or {}).get('estimate_bytes'))} | {gib(peak(row, 'reference'))} | "
                f"{gib(peak(row, 'candidate'))} | {row.get('problem_overrides') or ''} | "
                f"{(row.get('environment') or {}).get('device', '')} |"
            )
        else:
            error = row.get("error", {})
            lines.append(
                f"| {name} | NO VERDICT ({error.get('kind')}) | {str(error.get('message', row))[:90]} | | | | | |"
            )
    ran = [index for index in range(1, 9) if os.path.exists(os.path.join(out, f"concurrent-{index}.status"))]
    if ran:
        lines += [
            "",
            "Concurrent: 8 `kforge eval` processes at once, " + status_of(os.path.join(out, "concurrent.status")),
            "",
            "| # | exit | verdict | reference peak GiB | candidate peak GiB | problem |",
            "|---|---|---|---|---|---|",
        ]
    else:  # CONCURRENT_LIMIT_S=0: the batch alone
        lines += ["", "Concurrent: not run (CONCURRENT_LIMIT_S=0)."]
    concurrent = []
    for index in ran:
        rows = load_lines(os.path.join(out, f"concurrent-{index}.json"))
        row = rows[0] if rows else {}
        concurrent.append({"status": status_of(os.path.join(out, f"concurrent-{index}.status")), "result": row})
        lines.append(
            f"| {index} | {concurrent[-1]['status']} | {row.get('verdict', 'none')}"
            f"{' (MACHINE BLAMED)' if row and blames_machine(row) else ''} | {gib(peak(row, 'reference'))} | "
            f"{gib(peak(row, 'candidate'))} | {os.path.basename(str(row.get('problem', '')))} |"
        )
    blamed = [row for row in verdicts + [entry["result"] for entry in concurrent] if row and blames_machine(row)]
    lines += [
        "",
        f"Verdicts that blame a candidate for the machine: {len(blamed)}; evaluations without a verdict: "
        f"{len(missing) + sum(1 for entry in concurrent if not entry['result'].get('verdict'))}",
    ]
    json.dump(
        {"batch": batch, "concurrent": concurrent, "batch_wall_s": wall_s}, open(os.path.join(out, "result.json"), "w")
    )
    print("\n".join(line for line in lines if line is not None))


if __name__ == "__main__":
    main(sys.argv[1])
