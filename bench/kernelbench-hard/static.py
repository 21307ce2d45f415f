"""What kforge's static guard decides, before anything runs, on the KernelBench-Hard solutions that
prepare.py laid out: per policy, with the sandbox in force (its `confined` findings are notes) and
without it (they reject), at native precision.

    /usr/bin/python3 bench/kernelbench-hard/static.py .gpu-corpus/kbh

Prints one line per policy and sandbox state with the count of solutions refused before they run,
then each refusal (solution, check, the finding's message). Runs on any machine: no GPU, no build.
"""

import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "worker"))

from kforge_worker.guard.policy import load_policy  # noqa: E402
from kforge_worker.guard.static import analyze_file, rejections  # noqa: E402
from kforge_worker.guard.static_stage import confine, forbidden_in_source, forbidden_names  # noqa: E402

IN_FORCE = "read-only view, loopback network, own pid namespace, seccomp (assumed)"


def main(argv) -> int:
    corpus = Path(argv[0])
    pairs = [line.split(":") for line in (corpus / "pairs.txt").read_text().split()]
    for sandbox in (None, IN_FORCE):
        for name in ("kernelbench", "own-kernels"):
            policy = load_policy(name)
            refused = []
            for problem, solution in pairs:
                problem_path, path = str(corpus / problem), str(corpus / solution)
                found = analyze_file(path, policy, precision="native", problem_path=problem_path)
                names = forbidden_names(problem_path)
                first = rejections(forbidden_in_source(path, names) + confine(found, sandbox))
                if first:
                    refused.append((Path(solution).stem, first[0]["check"], first[0]["message"]))
            checks = collections.Counter(check for _, check, _ in refused)
            state = "sandbox in force" if sandbox else "no sandbox"
            print(f"{name}, {state}: {len(refused)} of {len(pairs)} refused before they run {dict(checks)}")
            for solution, check, message in refused:
                print(f"  {solution}: {check}: {message[:160]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
