"""Lays out KernelBench-Hard's problems and the published H100 solutions for `kforge eval DIR`.

    git clone https://github.com/Infatoshi/kernelbench.com MIRROR      (or the fetch tool's mirror)
    python3 bench/kernelbench-hard/prepare.py MIRROR .gpu-corpus/kbh [--all]

Copies `benchmarks/hard/problems-h100/<problem>/` (reference.py, shapes.py, problem.yaml) and the
solutions of `public/runs/h100/` whose run that site lists as correct and audited clean (`--all`:
every solution with its text) into OUT, with OUT/pairs.txt (one `problem/reference.py:solution` a
line, the batch form's pairs file) and OUT/sources.tsv (run id, model, problem, the site's own
verdict and audit). OUT belongs in an ignored folder: none of this is ours to ship. Reads the
mirror with `git show`, so a bare mirror works as well as a checkout.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

PROBLEMS = "benchmarks/hard/problems-h100"
SOLUTIONS = "public/runs/h100"
DETAILS = "public/data/rundetail/h100"
PROBLEM_FILES = ("reference.py", "shapes.py", "problem.yaml")


def git(mirror: Path, *arguments: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), *arguments], check=True, capture_output=True, text=True).stdout


def main(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirror", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--all", action="store_true", help="every solution with its text, not only clean correct ones")
    options = parser.parse_args(argv)
    listed = git(options.mirror, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    problems = sorted({path.split("/")[3] for path in listed if path.startswith(PROBLEMS + "/")})
    for problem in problems:
        folder = options.out / "problems" / problem
        folder.mkdir(parents=True, exist_ok=True)
        for name in PROBLEM_FILES:
            (folder / name).write_text(git(options.mirror, "show", f"HEAD:{PROBLEMS}/{problem}/{name}"))
    (options.out / "solutions").mkdir(parents=True, exist_ok=True)
    pairs, sources = [], ["run_id\tmodel\tproblem\tsite_correct\tsite_audit"]
    for path in sorted(p for p in listed if p.startswith(DETAILS + "/") and p.endswith(".json")):
        detail = json.loads(git(options.mirror, "show", f"HEAD:{path}"))
        run_id, problem = detail["run_id"], detail["problem"]
        solution = f"{SOLUTIONS}/{run_id}_solution.py.txt"
        if problem not in problems or solution not in listed:
            continue
        if not options.all and not (detail.get("correct") and detail.get("annotation_verdict") == "clean"):
            continue
        target = options.out / "solutions" / f"{run_id}.py"
        target.write_text(git(options.mirror, "show", f"HEAD:{solution}"))
        pairs.append(f"problems/{problem}/reference.py:solutions/{target.name}")
        sources.append(
            f"{run_id}\t{detail.get('model')}\t{problem}\t{detail.get('correct')}\t{detail.get('annotation_verdict')}"
        )
    (options.out / "pairs.txt").write_text("\n".join(pairs) + "\n")
    (options.out / "sources.tsv").write_text("\n".join(sources) + "\n")
    print(f"{len(problems)} problems, {len(pairs)} solutions in {options.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
