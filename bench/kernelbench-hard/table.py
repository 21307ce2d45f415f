"""The per-solution table of docs/benchmarks/kernelbench-hard.md from gpu.sh's result files.

    python3 bench/kernelbench-hard/table.py CORPUS OUT/kernelbench.jsonl OUT/own-kernels.jsonl

One row per solution of CORPUS/sources.tsv: the site's verdict, then kforge's verdict and first
reason under each policy whose file is given (the policy is the file's name), and the speedup over
eager where it is `correct`.
"""

import csv
import json
import sys
from pathlib import Path


def results(path: Path) -> dict:
    found = {}
    for line in path.read_text().splitlines():
        try:
            result = json.loads(line)
        except ValueError:
            continue
        if isinstance(result, dict) and "candidate" in result:
            found[Path(result["candidate"]).stem] = result
    return found


def cell(result) -> str:
    if result is None:
        return "not run"
    if "verdict" not in result:
        error = result.get("error") or {}
        return f"no verdict ({error.get('kind')}: {str(error.get('message', ''))[:80]})"
    verdict = result["verdict"]
    if verdict == "correct":
        speedup = (result.get("timing") or {}).get("speedup_vs_eager")
        return f"correct, {speedup:.2f}x eager" if isinstance(speedup, (int, float)) else "correct"
    reason = (result.get("reasons") or [{}])[0]
    text = str(reason.get("message", "")).replace("|", "/").replace("\n", " ")[:140]
    return f"{verdict} (`{reason.get('check')}`): {text}"


def main(argv) -> int:
    corpus, files = Path(argv[0]), [Path(name) for name in argv[1:]]
    by_policy = {path.stem: results(path) for path in files if path.exists()}
    rows = list(csv.DictReader((corpus / "sources.tsv").open(), delimiter="\t"))
    print("| solution | problem | " + " | ".join(by_policy) + " |")
    print("|---|---|" + "---|" * len(by_policy))
    for row in rows:
        cells = [cell(found.get(row["run_id"])) for found in by_policy.values()]
        print(f"| {row['run_id']} | {row['problem']} | " + " | ".join(cells) + " |")
    for policy, found in by_policy.items():
        verdicts = {}
        for row in rows:
            result = found.get(row["run_id"])
            key = "not run" if result is None else result.get("verdict", "no verdict")
            verdicts[key] = verdicts.get(key, 0) + 1
        print(f"\n{policy}: " + ", ".join(f"{count} {key}" for key, count in sorted(verdicts.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
