#!/usr/bin/env bash
# Issue 17's record on the H200 (docs/benchmarks/kernelbench-sizes-h200.md): KernelBench at its own
# sizes, many candidates at once, and no candidate blamed for the machine.
#
#   here:    bash scripts/bundle-gpu.sh            (and carry .corpus: the KernelBench and leaderboard checkouts)
#   device:  OUT=/tmp/kb-sizes bash bench/gpu/kernelbench_sizes.sh [KERNELBENCH] [LEADERBOARD]
#
# Phase 0 (`single`): the first pair whose problem is level-1 19_ReLU (6 GiB inputs), alone on the
# device, so that its stage peaks are on record even if the later phases run out of time.
# Phase 1 (`batch`): bench/kernelbench-sizes/pairs.py pairs COUNT (default 40) current KernelBench
# problems of levels 1-3 with the best-ranked published leaderboard kernel of the same name, and ONE
# `kforge eval DIR --json` evaluates them all (parallel builds, one device lease at a time, the
# host-wide memory budget), PERF_TRIALS (default 30) timed calls each, within BATCH_LIMIT_S (default
# 330). Phase 2 (`concurrent`): the eight largest pairs again, as 8 separate `kforge eval` processes
# started at once (--wait 10m), their builds now cache hits (CONCURRENT_LIMIT_S=0 skips it).
# Phase 3: report.py writes result.md and result.json (verdicts, peak memory per role, estimate,
# wall time, candidates per GPU-hour; any evaluation without a verdict, and any verdict that blames
# a candidate for the machine).
# Everything lands in $OUT (pairs/, batch.jsonl, batch.stderr, concurrent-<i>.json/.stderr/.status).
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/kforge-kernelbench-sizes}"
kernelbench="${1:-.corpus/ScalingIntelligence+KernelBench}"
leaderboard="${2:-.corpus/anneouyang+KernelBenchLeaderboard}"
mkdir -p "$out"
. scripts/gpu-node.sh
export KFORGE_CACHE_DIR="${KFORGE_CACHE_DIR:-/tmp/kforge-cache}"
perf="${PERF_TRIALS:-30}"

python3 bench/kernelbench-sizes/pairs.py --kernelbench "$kernelbench" --leaderboard "$leaderboard" \
  --out "$out/pairs" --count "${COUNT:-40}" | tee "$out/pairs.log"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.csv" 2>&1

single="$(grep -m1 '19_ReLU' "$out/pairs/pairs.txt")"
if [ -n "$single" ] && [ "${SINGLE_LIMIT_S:-150}" -gt 0 ]; then  # SINGLE_LIMIT_S=0: skip it
  started=$(date +%s.%N)
  timeout -s INT "${SINGLE_LIMIT_S:-150}" kforge eval "${single%%:*}" "${single#*:}" --backend cuda --json \
    --perf-trials "$perf" --warmup 5 >"$out/single.json" 2>"$out/single.stderr"
  echo "status=$? wall_s=$(python3 -c "print(round($(date +%s.%N) - $started, 1))") pair=$single" >"$out/single.status"
fi

# The batch keeps its results in batch.kept.jsonl (`--resume`): a batch cut short by its limit is
# finished by a later lease run with RESUME_FROM=<the earlier run's folder> (its batch.kept.jsonl and
# batch.parts are copied here first); batch.parts gets one line per run: its wall time and the
# candidates it evaluated, for report.py's candidates per GPU-hour over all the runs.
# The folder may keep it compressed (batch.kept.jsonl.gz: the results travel in the tree to the device).
if [ -n "${RESUME_FROM:-}" ]; then
  if [ -f "$RESUME_FROM/batch.kept.jsonl.gz" ]; then
    gzip -dc "$RESUME_FROM/batch.kept.jsonl.gz" >"$out/batch.kept.jsonl"
  else
    cp "$RESUME_FROM/batch.kept.jsonl" "$out/batch.kept.jsonl"
  fi
  cp "$RESUME_FROM/batch.parts" "$out/batch.parts" 2>/dev/null || :
fi
verdicts() {
  python3 -c 'import json, os, sys
def verdict(line):
    try:
        return "verdict" in json.loads(line)
    except ValueError:
        return False
print(sum(map(verdict, open(sys.argv[1]))) if os.path.exists(sys.argv[1]) else 0)' "$out/batch.kept.jsonl"
}
before=$(verdicts)
started=$(date +%s.%N)
timeout -s INT "${BATCH_LIMIT_S:-330}" kforge eval "$out/pairs" --backend cuda --json --perf-trials "$perf" \
  --warmup 5 --wait 10m --resume "$out/batch.kept.jsonl" >"$out/batch.jsonl" 2>"$out/batch.stderr"
status=$?
wall_s=$(python3 -c "print(round($(date +%s.%N) - $started, 1))")
echo "status=$status wall_s=$wall_s" >"$out/batch.status"
echo "wall_s=$wall_s evaluated=$(( $(verdicts) - before )) status=$status date=$(date -u +%FT%TZ)" >>"$out/batch.parts"

# The eight pairs with the largest problems (by the batch's estimates), as eight processes at once.
python3 - "$out" <<'PY' >"$out/concurrent-pairs.txt"
import json, sys
out = sys.argv[1]
pairs = [line.strip() for line in open(f"{out}/pairs/pairs.txt") if line.strip()]
size = {}
for line in open(f"{out}/batch.jsonl"):
    try:
        result = json.loads(line)
    except ValueError:
        continue
    size[result.get("candidate")] = (result.get("memory") or {}).get("estimate_bytes") or 0
pairs.sort(key=lambda pair: -size.get(pair.split(":", 1)[1], 0))
print("\n".join(pairs[:8]))
PY
i=0
started=$(date +%s.%N)
[ "${CONCURRENT_LIMIT_S:-180}" -gt 0 ] || : >"$out/concurrent-pairs.txt"  # CONCURRENT_LIMIT_S=0: skip it
while IFS=: read -r problem candidate; do
  i=$((i + 1))
  ( timeout -s INT "${CONCURRENT_LIMIT_S:-180}" kforge eval "$problem" "$candidate" --backend cuda --json \
      --perf-trials "$perf" --warmup 5 --wait 10m >"$out/concurrent-$i.json" 2>"$out/concurrent-$i.stderr"
    echo "$?" >"$out/concurrent-$i.status" ) &
done <"$out/concurrent-pairs.txt"
wait
echo "wall_s=$(python3 -c "print(round($(date +%s.%N) - $started, 1))")" >"$out/concurrent.status"

python3 bench/kernelbench-sizes/report.py "$out" >"$out/result.md"
cat "$out/result.md"
