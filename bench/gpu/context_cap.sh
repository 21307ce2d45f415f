#!/usr/bin/env bash
# Issue 17, item 3, on a GPU: workers' CUDA contexts outside a lease are in the host-wide budget
# (docs/sizes.md, "Contexts outside a lease"). PROCESSES (default 6) `kforge eval` runs of a shipped
# example start at once with KFORGE_CONTEXT_BUDGET_BYTES at CONTEXTS (default 2) contexts' worth, so
# most of their candidate workers start without a context and wait for room before their builds.
#
#   device:  OUT=/tmp/context-cap bash bench/gpu/context_cap.sh
#
# Writes $OUT/run-<i>.json/.stderr/.status, $OUT/apps.csv (nvidia-smi's per-process device memory,
# sampled every half second) and $OUT/result.txt: each run's exit status and verdict, how many said
# they waited for room for a context, and the most processes that held device memory at once.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/kforge-context-cap}"
mkdir -p "$out"
. scripts/gpu-node.sh
export KFORGE_CACHE_DIR="${KFORGE_CACHE_DIR:-/tmp/kforge-cache}"
export KFORGE_CONTEXT_BUDGET_BYTES=$(( ${CONTEXTS:-2} * 768 * 1024 * 1024 ))
problem=problems/level1/01_relu.py
candidate=examples/level1_01_relu/cuda_fast.py

( while :; do nvidia-smi --query-compute-apps=timestamp,pid,used_memory --format=csv,noheader; sleep 0.5; done ) >"$out/apps.csv" 2>&1 &
sampler=$!
for i in $(seq 1 "${PROCESSES:-6}"); do
  ( timeout -s INT "${LIMIT_S:-300}" kforge eval "$problem" "$candidate" --backend cuda --json --perf-trials 20 --wait 10m \
      >"$out/run-$i.json" 2>"$out/run-$i.stderr"
    echo "$?" >"$out/run-$i.status" ) &
done
wait $(jobs -p | grep -v "^$sampler$") 2>/dev/null
kill "$sampler" 2>/dev/null

python3 - "$out" "${PROCESSES:-6}" <<'PY' | tee "$out/result.txt"
import collections, json, sys
out, count = sys.argv[1], int(sys.argv[2])
for index in range(1, count + 1):
    status = open(f"{out}/run-{index}.status").read().strip()
    try:
        verdict = json.loads(open(f"{out}/run-{index}.json").read()).get("verdict")
    except ValueError:
        verdict = None
    stderr = open(f"{out}/run-{index}.stderr").read()
    waited = "waiting for room for a worker's CUDA context" in stderr
    print(f"run {index}: exit {status}, verdict {verdict}, waited for a context: {waited}")
at = collections.defaultdict(set)
for line in open(f"{out}/apps.csv"):
    parts = [part.strip() for part in line.split(",")]
    if len(parts) == 3 and parts[1].isdigit():
        at[parts[0]].add(parts[1])
print("most processes holding device memory at once:", max((len(pids) for pids in at.values()), default=0))
PY
