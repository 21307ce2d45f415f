#!/usr/bin/env python3
"""Evaluate a corpus of published KernelBench kernels with `kforge eval`, under several guard policies.

The kernels are not kforge's: KernelBench's leaderboard samples, Stanford's good-kernels, KernelBench's
own prompt examples, Triton kernels. They stay in a folder outside the repository (the corpus root,
`--corpus`); `bench/gpu/kernelbench-corpus.tsv` lists the pairs to evaluate, by path relative to it:

    level <TAB> label <TAB> problem <TAB> candidate <TAB> backend <TAB> claimed speedup (or -)

Rows of level `attack` are cheats that others wrote (KernelBench's own adversarial test kernels):
the summary counts them apart, as caught when they end rejected or incorrect.

Each kernel is evaluated once per policy (`--policies`, default `kernelbench,own-kernels`), the
policies one after the other so that the second finds the first's build in the shared build cache
(`KFORGE_CACHE_DIR`, default `<out>/cache`); `--jobs` kernels at once (their builds run in
parallel; kforge's host-wide device lock keeps their timed stages off each other). Per kernel a
JSON record is written to `<out>/records/` as soon as it is done; at the end `<out>/result.json` and
`<out>/result.md` hold every kernel: its source, its verdict under each policy, its own share, its
speedups and every rejection's reasons.

    python3 bench/gpu/kernelbench_corpus.py --corpus /path/to/corpus --out "$OUT/kernelbench-corpus" --jobs 8

`--copy-to DIR` copies only the listed files into DIR (same relative paths) and exits: a small folder
to carry to the GPU machine. `--check-cpu` runs what needs no GPU on this machine instead (the
static guard under each policy, and the problem's tolerance audit, which loads and runs the
reference on the CPU), to find harness problems before a GPU lease.
"""

import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_LIST = ROOT / "bench" / "gpu" / "kernelbench-corpus.tsv"
STDERR_TAIL_CHARS = 4000
#: The level of rows that are cheats written by others: they must end rejected or incorrect.
ATTACK = "attack"
REASON_CHARS = 600


@dataclass
class Pair:
    index: int
    level: str
    label: str
    problem: str
    candidate: str
    backend: str
    claimed: Optional[float]

    @property
    def slug(self) -> str:
        return f"{self.index:03d}-" + re.sub(r"[^A-Za-z0-9]+", "-", Path(self.candidate).stem)[:48].strip("-")


def read_list(path: Path) -> List[Pair]:
    pairs = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 6:
            sys.exit(f"{path}:{number}: expected 6 tab-separated fields, got {len(fields)}")
        level, label, problem, candidate, backend, claimed = fields
        if backend not in ("cuda", "triton", "cpu"):
            sys.exit(f"{path}:{number}: backend must be cuda, triton or cpu, got {backend!r}")
        pairs.append(
            Pair(len(pairs) + 1, level, label, problem, candidate, backend, None if claimed == "-" else float(claimed))
        )
    return pairs


def run(command: List[str], timeout_s: float, env: Dict[str, str]) -> Dict[str, Any]:
    started = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, env=env)
        code, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as expired:
        code = None
        stdout = (
            expired.stdout.decode(errors="replace") if isinstance(expired.stdout, bytes) else (expired.stdout or "")
        )
        stderr = (
            expired.stderr.decode(errors="replace") if isinstance(expired.stderr, bytes) else (expired.stderr or "")
        )
    return {
        "command": " ".join(shlex.quote(part) for part in command),
        "exit_code": code,
        "wall_s": round(time.monotonic() - started, 2),
        "stdout": stdout,
        "stderr": stderr,
    }


def summary(result: Dict[str, Any]) -> Dict[str, Any]:
    """The fields of one `kforge eval --json` result that the record keeps."""
    timing = result.get("timing") or {}
    attribution = result.get("attribution") or {}
    guard = result.get("guard") or {}
    return {
        "verdict": result.get("verdict"),
        "policy": guard.get("policy"),
        "reasons": [
            {"check": reason["check"], "message": reason["message"][:REASON_CHARS]}
            for reason in result.get("reasons", [])
        ],
        "own_share": attribution.get("own_share"),
        "by_origin_ms": attribution.get("by_origin_ms"),
        "torch_ops": (attribution.get("torch_ops") or [])[:8],
        "substituted_ops": attribution.get("substituted_ops"),
        "attribution_unavailable": attribution.get("unavailable"),
        "speedup_vs_eager": timing.get("speedup_vs_eager"),
        "speedup_vs_compile": timing.get("speedup_vs_compile"),
        "speedup_vs_best": timing.get("speedup_vs_best"),
        "candidate_median_ms": (timing.get("candidate_ms") or {}).get("median"),
        "eager_median_ms": (timing.get("eager_ms") or {}).get("median"),
        "guard_notes": [
            check["message"][:REASON_CHARS]
            for check in guard.get("checks", [])
            if check.get("status") == "note"
            and check.get("check") in ("torch-fallback", "own-kernel", "silent-fallback")
        ],
        "first_error": (result.get("diagnostics") or {}).get("first_error"),
        "environment": result.get("environment"),
        # Each stage's time (ms): what the evaluation held the device for, apart from its wait.
        "stages": result.get("stages"),
    }


def evaluate(pair: Pair, args, env: Dict[str, str]) -> Dict[str, Any]:
    record: Dict[str, Any] = {
        "index": pair.index,
        "level": pair.level,
        "label": pair.label,
        "problem": pair.problem,
        "candidate": pair.candidate,
        "backend": pair.backend,
        "claimed_speedup": pair.claimed,
        "policies": {},
    }
    for policy in args.policies:
        command = [
            *shlex.split(args.kforge),
            "eval",
            str(args.corpus / pair.problem),
            str(args.corpus / pair.candidate),
            "--backend",
            pair.backend,
            "--guard-policy",
            policy,
            "--json",
            *shlex.split(args.eval_args),
            *shlex.split(args.policy_args.get(policy, "")),
        ]
        limit = min(args.timeout, args.deadline - time.monotonic()) if args.deadline else args.timeout
        if limit <= 0:
            record["policies"][policy] = {"error": "not run: the corpus run's --deadline-s had passed"}
            continue
        ran = run(command, limit, env)
        entry: Dict[str, Any] = {"command": ran["command"], "exit_code": ran["exit_code"], "wall_s": ran["wall_s"]}
        try:
            entry.update(summary(json.loads(ran["stdout"])))
        except (json.JSONDecodeError, TypeError, KeyError) as error:
            entry["error"] = (
                stopped(limit, args.timeout, ran["stderr"])
                if ran["exit_code"] is None
                else f"no JSON result ({type(error).__name__}); exit status {ran['exit_code']}"
            )
            entry["stderr_tail"] = ran["stderr"][-STDERR_TAIL_CHARS:]
        record["policies"][policy] = entry
    return record


def stopped(limit: float, timeout: float, stderr: str) -> str:
    """Why a command that printed no result was stopped: its own limit, or the run's deadline (which
    shortens the limit of the evaluations started last), and whether it was still waiting for the
    device then (kforge says so on stderr: the wait is other evaluations' work, not this one's)."""
    why = (
        "timed out after %.0f s" % limit
        if limit >= timeout
        else "stopped at the run's --deadline-s after %.0f s" % limit
    )
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    return why + (", still waiting for the device" if "waiting for cuda" in last else "")


def check_cpu(pair: Pair, args, env: Dict[str, str]) -> Dict[str, Any]:
    """What runs without a GPU: the static guard under each policy, the problem's audit on the CPU."""
    worker = ROOT / "worker"
    environment = {**env, "PYTHONPATH": str(worker)}
    record: Dict[str, Any] = {
        "index": pair.index,
        "label": pair.label,
        "problem": pair.problem,
        "candidate": pair.candidate,
        "backend": pair.backend,
        "static": {},
    }
    for policy in args.policies:
        ran = run(
            [args.python, "-m", "kforge_worker.guard.static", str(args.corpus / pair.candidate), policy],
            args.timeout,
            environment,
        )
        try:
            findings = json.loads(ran["stdout"])
            record["static"][policy] = {
                "rejects": [
                    f"{item['check']}: {item['message'][:200]}" for item in findings if item["severity"] == "reject"
                ],
                "notes": sorted({item["check"] for item in findings if item["severity"] == "note"}),
            }
        except json.JSONDecodeError:
            record["static"][policy] = {"error": ran["stderr"][-STDERR_TAIL_CHARS:]}
    audit = run(
        [
            args.python,
            "-m",
            "kforge_worker",
            "audit",
            str(args.corpus / pair.problem),
            "--device",
            "cpu",
            "--seeds",
            "11",
        ],
        args.timeout,
        environment,
    )
    record["audit"] = {"exit_code": audit["exit_code"], "wall_s": audit["wall_s"]}
    try:
        parsed = json.loads(audit["stdout"])
        record["audit"].update({key: parsed.get(key) for key in ("degenerate", "passing", "exact_trivial", "error")})
    except json.JSONDecodeError:
        record["audit"]["stderr_tail"] = audit["stderr"][-STDERR_TAIL_CHARS:]
    return record


def cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def share(value: Optional[float]) -> str:
    return "–" if value is None else f"{value:.0%}"


def speed(value: Optional[float]) -> str:
    return "–" if value is None else f"{value:.2f}×"


#: The stages that hold the device (the rest: the build, and loading the built module).
DEVICE_STAGES = ("reference", "baseline", "correctness", "judge", "timing")


def device_seconds(entry: Dict[str, Any]) -> str:
    """Seconds of the evaluation's device-holding stages (its wait for the device not counted)."""
    stages = entry.get("stages") or {}
    held = [stages[name] for name in DEVICE_STAGES if isinstance(stages.get(name), (int, float))]
    return f"{sum(held) / 1000:.1f}" if held else "–"


def verdict_cell(entry: Dict[str, Any]) -> str:
    if "error" in entry:
        return f"no verdict ({entry['error']})"
    if not entry.get("verdict"):
        return f"no verdict (exit status {entry.get('exit_code')}, a JSON result without one)"
    first = entry["reasons"][0]["check"] if entry.get("reasons") else None
    return entry["verdict"] + (f" ({first})" if first else "")


def verdict_counts(records: List[Dict[str, Any]], policy: str) -> str:
    counts: Dict[str, int] = {}
    for record in records:
        key = record["policies"].get(policy, {}).get("verdict") or "no verdict"
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{name} {count}" for name, count in sorted(counts.items())) or "none"


def markdown(records: List[Dict[str, Any]], args, started: str, listed: int, final: bool = True) -> str:
    """The run's table; `final` False while it runs (rewritten after each kernel, so that a run cut
    off with its machine still leaves its table)."""
    policies = args.policies
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    lines = [
        "# KernelBench corpus under kforge's guard policies",
        "",
        f"- started {started}, " + (f"finished {now}" if final else f"last kernel done {now} (the run had not ended)"),
        f"- command: `{' '.join(shlex.quote(part) for part in sys.argv)}`",
        f"- kernels: {len(records)} of the {listed} selected"
        + (" (the rest not started before --deadline-s)" if len(records) < listed else "")
        + f"; policies: {', '.join(policies)}",
        "",
    ]
    environment = next(
        (
            entry.get("environment")
            for record in records
            for entry in record["policies"].values()
            if entry.get("environment")
        ),
        None,
    )
    if environment:
        lines += [
            f"- environment: {environment.get('device')}, torch {environment.get('torch')}, "
            f"CUDA {environment.get('cuda')}, "
            f"driver {environment.get('driver')}",
            "",
        ]
    honest = [record for record in records if record["level"] != ATTACK]
    attacks = [record for record in records if record["level"] == ATTACK]
    for policy in policies:
        lines.append(f"- `{policy}`: {verdict_counts(honest, policy)}")
        if attacks:
            caught = sum(
                record["policies"].get(policy, {}).get("verdict") in ("rejected", "incorrect") for record in attacks
            )
            lines.append(
                f"  - attacks ({ATTACK} rows, cheats written by others): {caught} of {len(attacks)} "
                f"rejected or incorrect ({verdict_counts(attacks, policy)})"
            )
    lines += [
        "",
        "| # | level | kernel | backend | claimed | "
        + " | ".join(f"{policy}" for policy in policies)
        + " | own share | vs eager | vs compile | device s |",
        "|" + " --- |" * (9 + len(policies)),
    ]
    for record in records:
        first = record["policies"].get(policies[0], {})
        lines.append(
            "| "
            + " | ".join(
                cell(value)
                for value in [
                    record["index"],
                    record["level"],
                    f"{record['label']}<br>`{record['candidate']}`",
                    record["backend"],
                    speed(record["claimed_speedup"]),
                    *[verdict_cell(record["policies"].get(policy, {})) for policy in policies],
                    share(first.get("own_share")),
                    speed(first.get("speedup_vs_eager")),
                    speed(first.get("speedup_vs_compile")),
                    " / ".join(device_seconds(record["policies"].get(policy, {})) for policy in policies),
                ]
            )
            + " |"
        )
    lines += ["", "## Every rejection and failure, with its reasons", ""]
    for record in records:
        for policy in policies:
            entry = record["policies"].get(policy, {})
            if entry.get("verdict") == "correct":
                continue
            lines.append(f"- #{record['index']} `{record['candidate']}` under `{policy}`: {verdict_cell(entry)}")
            for reason in entry.get("reasons", []):
                lines.append(f"  - `{reason['check']}`: {cell(reason['message'])}")
            if entry.get("first_error"):
                lines.append(f"  - first error: {cell(entry['first_error'])}")
            if "stderr_tail" in entry:
                lines.append(f"  - stderr (tail): {cell(entry['stderr_tail'][-400:])}")
    lines += ["", "## Attribution of the kernels judged correct under the first policy", ""]
    for record in records:
        entry = record["policies"].get(policies[0], {})
        if entry.get("verdict") != "correct":
            continue
        where = {True: " (in reference)", False: " (not in reference)"}
        ops = ", ".join(
            f"{op['op']} {op['ms']:.3g} ms{where.get(op.get('in_reference'), '')}"
            for op in entry.get("torch_ops") or []
        )
        lines.append(
            f"- #{record['index']}: own {share(entry.get('own_share'))}, by origin {entry.get('by_origin_ms')}"
            + (f"; PyTorch: {ops}" if ops else "")
            + (f"; substituted: {entry['substituted_ops']}" if entry.get("substituted_ops") else "")
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="the corpus root the list's paths are relative to")
    parser.add_argument("--list", type=Path, default=DEFAULT_LIST, help="the pairs (default: %(default)s)")
    parser.add_argument(
        "--out", type=Path, default=Path(os.environ.get("OUT", "/tmp/kforge-out")) / "kernelbench-corpus"
    )
    parser.add_argument("--policies", default="kernelbench,own-kernels", help="comma-separated guard policies")
    parser.add_argument("--jobs", type=int, default=8, help="kernels evaluated at once (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=1500, help="seconds per evaluation (default %(default)s)")
    parser.add_argument("--kforge", default="kforge", help="the kforge command (default %(default)s)")
    parser.add_argument("--eval-args", default="", help='more flags for every `kforge eval`, e.g. "--perf-trials 50"')
    parser.add_argument(
        "--policy-args",
        action="append",
        default=[],
        metavar="POLICY=FLAGS",
        help='more flags for one policy\'s evaluations, e.g. "own-kernels=--no-timing" (its verdict '
        "and attribution come from the correctness trials; repeatable)",
    )
    parser.add_argument(
        "--deadline-s",
        type=float,
        default=0,
        help="stop starting evaluations this many seconds in, and cut those running there, so that the "
        "record of what finished is written before an outer limit (default: none)",
    )
    parser.add_argument("--only", default="", help="evaluate only pairs whose label or candidate contains this text")
    parser.add_argument("--limit", type=int, default=0, help="evaluate only the first N pairs")
    parser.add_argument("--copy-to", type=Path, help="copy the listed files into this folder and exit")
    parser.add_argument("--check-cpu", action="store_true", help="static guard and problem audit only, no GPU")
    parser.add_argument("--python", default=os.environ.get("KFORGE_PYTHON", sys.executable), help="for --check-cpu")
    args = parser.parse_args()
    args.policies = [policy.strip() for policy in args.policies.split(",") if policy.strip()]
    pairs_of_args = [entry.split("=", 1) for entry in args.policy_args]
    if any(len(pair) != 2 or pair[0] not in args.policies for pair in pairs_of_args):
        parser.error(f"expected --policy-args POLICY=FLAGS with POLICY one of {', '.join(args.policies)}")
    args.policy_args = dict(pairs_of_args)
    args.corpus = args.corpus.resolve()
    args.deadline = time.monotonic() + args.deadline_s if args.deadline_s > 0 else None
    pairs = [pair for pair in read_list(args.list) if args.only in pair.label or args.only in pair.candidate]
    if args.limit:
        pairs = pairs[: args.limit]
    missing = [path for pair in pairs for path in (pair.problem, pair.candidate) if not (args.corpus / path).is_file()]
    if missing:
        sys.exit(f"not in the corpus {args.corpus}: {', '.join(missing[:5])}{' …' if len(missing) > 5 else ''}")
    if args.copy_to:
        for path in sorted({path for pair in pairs for path in (pair.problem, pair.candidate)}):
            target = args.copy_to / path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(args.corpus / path, target)
        print(f"copied the files of {len(pairs)} pairs into {args.copy_to}", file=sys.stderr)
        return 0
    (args.out / "records").mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "KFORGE_CACHE_DIR": os.environ.get("KFORGE_CACHE_DIR", str(args.out / "cache"))}
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    task = check_cpu if args.check_cpu else evaluate
    lock = threading.Lock()
    records: Dict[int, Dict[str, Any]] = {}

    def one(pair: Pair) -> None:
        if args.deadline and time.monotonic() >= args.deadline:
            return
        record = task(pair, args, env)
        (args.out / "records" / f"{pair.slug}.json").write_text(json.dumps(record, indent=2))
        with lock:
            records[pair.index] = record
            done = [records[index] for index in sorted(records)]
            (args.out / "partial.json").write_text(json.dumps(done, indent=2))
            if not args.check_cpu:
                (args.out / "result.md").write_text(markdown(done, args, started, len(pairs), final=False))
            status = (
                {policy: record.get("policies", {}).get(policy, {}).get("verdict") for policy in args.policies}
                if not args.check_cpu
                else {policy: record["static"][policy].get("rejects") for policy in args.policies}
            )
            print(f"[{len(records)}/{len(pairs)}] #{pair.index} {pair.label}: {status}", file=sys.stderr, flush=True)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(one, pairs))
    ordered = [records[index] for index in sorted(records)]
    not_started = [pair.label for pair in pairs if pair.index not in records]
    if not_started:
        print(f"not started before the deadline: {len(not_started)} of {len(pairs)} pairs", file=sys.stderr)
    name = "check-cpu" if args.check_cpu else "result"
    (args.out / f"{name}.json").write_text(
        json.dumps(
            {
                "started": started,
                "command": sys.argv,
                "policies": args.policies,
                "kernels": ordered,
                "not_started": not_started,
            },
            indent=2,
        )
    )
    if not args.check_cpu:
        (args.out / "result.md").write_text(markdown(ordered, args, started, len(pairs)))
    print(f"wrote {args.out}/{name}.json" + ("" if args.check_cpu else f" and {args.out}/result.md"), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
