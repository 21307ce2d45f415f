"""What kforge's static guard decides, before anything runs, on the KernelBench-Hard solutions that
prepare.py laid out: per run precision (`native`, the problems' own dtypes, and `fp32`, kforge's
default), per policy, with the sandbox in force (its `confined` findings are notes) and without it
(they reject).

    /usr/bin/python3 bench/kernelbench-hard/static.py .gpu-corpus/kbh

Prints one line per precision, policy and sandbox state with the count of solutions refused before
they run, then each refusal (solution, check, the finding's message). Runs on any machine: no GPU,
no build.
"""

import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "worker"))

from kforge_worker.guard.policy import load_policy  # noqa: E402
from kforge_worker.guard.static import analyze_file, rejections  # noqa: E402
from kforge_worker.guard.static_stage import confine, forbidden_in_source, forbidden_names  # noqa: E402

#: `native` keeps the problems' bf16 and fp8 dtypes; `fp32` is kforge's default run precision.
PRECISIONS = ("native", "fp32")
IN_FORCE = "read-only view, loopback network, own pid namespace, seccomp (assumed)"


def main(argv) -> int:
    corpus = Path(argv[0])
    pairs = [line.split(":") for line in (corpus / "pairs.txt").read_text().split()]
    for precision in PRECISIONS:
        for sandbox in (None, IN_FORCE):
            for name in ("kernelbench", "own-kernels"):
                refused = _refused(corpus, pairs, load_policy(name), precision, sandbox)
                checks = collections.Counter(check for _, check, _ in refused)
                state = "sandbox in force" if sandbox else "no sandbox"
                counts = f"{len(refused)} of {len(pairs)} refused before they run {dict(checks)}"
                print(f"{precision}, {name}, {state}: {counts}")
                for solution, check, message in refused:
                    print(f"  {solution}: {check}: {message[:160]}")
    return 0


def _refused(corpus: Path, pairs, policy, precision: str, sandbox):
    """(solution, check, message) of each solution the static stage refuses."""
    refused = []
    for problem, solution in pairs:
        problem_path, path = str(corpus / problem), str(corpus / solution)
        found = analyze_file(path, policy, precision=precision, problem_path=problem_path)
        names = forbidden_names(problem_path)
        first = rejections(forbidden_in_source(path, names) + confine(found, sandbox))
        if first:
            refused.append((Path(solution).stem, first[0]["check"], first[0]["message"]))
    return refused


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
