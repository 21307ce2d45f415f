"""Pairs published KernelBench leaderboard kernels with the CURRENT KernelBench problem of the same
name, for `kforge eval`'s batch form (a folder with pairs.txt).

    python3 bench/kernelbench-sizes/pairs.py --kernelbench KB --leaderboard LB --out DIR [--count 40]

KB is a KernelBench checkout (its KernelBench/level1..3 hold the problems at their own, current
sizes); LB the KernelBenchLeaderboard checkout (docs/assets/data.json maps "Level L: NAME" to its
solutions, best first; docs/assets/solutions/<file>.py holds them). For each chosen problem the
best-ranked solution that defines ModelNew is copied to DIR/candidates/ and a line
`<problem>:<candidate>` goes to DIR/pairs.txt; DIR/sources.tsv says where each came from (every
candidate here is a published, model-written kernel, none of kforge's). Problems are spread evenly
over each level (quota per level), and the largest level-1 problems are always taken.
"""

import argparse
import json
import os
import re
import shutil

QUOTAS = {1: 0.55, 2: 0.33, 3: 0.12}
ALWAYS = ("19_ReLU", "23_Softmax", "21_Sigmoid", "26_GELU_", "88_MinGPTNewGelu")


def problems_of(kernelbench: str, level: int) -> dict:
    folder = os.path.join(kernelbench, f"level{level}")
    return {name[:-3]: os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".py")}


def number(name: str) -> int:
    match = re.match(r"(\d+)_", name)
    return int(match.group(1)) if match else 0


def spread(names: list, count: int) -> list:
    if count >= len(names):
        return names
    step = len(names) / count
    return [names[int(index * step)] for index in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernelbench", required=True)
    parser.add_argument("--leaderboard", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--count", type=int, default=40)
    arguments = parser.parse_args()
    root = arguments.kernelbench
    if os.path.isdir(os.path.join(root, "KernelBench", "level1")):
        root = os.path.join(root, "KernelBench")
    assets = os.path.join(arguments.leaderboard, "docs", "assets")
    with open(os.path.join(assets, "data.json")) as handle:
        ranked = json.load(handle)
    usable = {1: [], 2: [], 3: []}
    solution_of = {}
    for key, solutions in ranked.items():
        match = re.match(r"Level (\d+): (.+)$", key)
        if not match or int(match.group(1)) not in usable:
            continue
        level, name = int(match.group(1)), match.group(2)
        current = problems_of(root, level).get(name)
        if current is None:
            continue
        for solution in solutions:
            path = os.path.join(assets, "solutions", f"{solution['file']}.py")
            if os.path.isfile(path) and "class ModelNew" in open(path, errors="replace").read():
                usable[level].append(name)
                solution_of[(level, name)] = (current, path, solution)
                break
    chosen = []
    for level, share in QUOTAS.items():
        names = sorted(usable[level], key=number)
        forced = [name for name in names if level == 1 and name in ALWAYS]
        rest = [name for name in names if name not in forced]
        quota = max(0, round(arguments.count * share) - len(forced))
        chosen += [(level, name) for name in forced + spread(rest, quota)]
    candidates = os.path.join(arguments.out, "candidates")
    os.makedirs(candidates, exist_ok=True)
    with open(os.path.join(arguments.out, "pairs.txt"), "w") as pairs, open(
        os.path.join(arguments.out, "sources.tsv"), "w"
    ) as sources:
        sources.write("level\tproblem\tcurrent_problem\tcandidate\tleaderboard_file\tmodel\tleaderboard_speedup\n")
        for level, name in chosen:
            current, path, solution = solution_of[(level, name)]
            target = os.path.join(candidates, f"l{level}_{name}__{solution['file'][:8]}.py")
            shutil.copyfile(path, target)
            pairs.write(f"{os.path.abspath(current)}:{os.path.abspath(target)}\n")
            sources.write(
                f"{level}\t{name}\t{os.path.abspath(current)}\t{os.path.abspath(target)}\t"
                f"{solution['file']}\t{solution.get('display_name')}\t{solution.get('torch_speedup')}\n"
            )
    print(
        f"{len(chosen)} pairs: "
        + ", ".join(f"level {level}: {sum(1 for l, _ in chosen if l == level)}" for level in QUOTAS)
    )


if __name__ == "__main__":
    main()
