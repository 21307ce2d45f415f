#!/usr/bin/env bash
# KernelBench-Hard's published H100 solutions through kforge at native precision, under both
# policies (docs/benchmarks/kernelbench-hard.md). Resumable: run it again on the same machine and
# it goes on where it stopped (the results are kept in $STATE).
#
#   here:    python3 bench/kernelbench-hard/prepare.py MIRROR .gpu-corpus/kbh; bash scripts/bundle-gpu.sh
#   device:  OUT=/tmp/kbh LIMIT_S=500 bash bench/kernelbench-hard/gpu.sh .gpu-corpus/kbh   (carry .gpu, .gpu-corpus)
#
# Writes $OUT/<policy>.jsonl (one result a line, as `kforge eval --json` prints them) and
# $OUT/<policy>.stderr.tail, then the table of bench/kernelbench-hard/table.py to $OUT/table.md.
set -uo pipefail
corpus="${1:?the folder prepare.py wrote}"
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/kforge-kbh}"
state="${STATE:-/tmp/kforge-kbh-state}"
mkdir -p "$out" "$state"
. scripts/gpu-node.sh
export KFORGE_CACHE_DIR="${KFORGE_CACHE_DIR:-/tmp/kforge-cache}"
started=$(date +%s)
for policy in ${POLICIES:-kernelbench own-kernels}; do
  left=$(( ${LIMIT_S:-500} - ($(date +%s) - started) ))
  [ "$left" -lt 30 ] && break
  timeout -s INT "$left" kforge eval "$corpus" --backend cuda --precision native --guard-policy "$policy" \
    --json --perf-trials 20 --warmup 3 --wait 10m --resume "$state/$policy.jsonl" \
    >>"$state/$policy.stdout" 2>>"$state/$policy.stderr"
  echo "$policy: exit $? after $(( $(date +%s) - started )) s, $(grep -c . "$state/$policy.jsonl" 2>/dev/null || echo 0) kept"
  cp "$state/$policy.jsonl" "$out/$policy.jsonl" 2>/dev/null
  tail -c 6000 "$state/$policy.stderr" >"$out/$policy.stderr.tail"
done
python3 bench/kernelbench-hard/table.py "$corpus" "$out"/*.jsonl >"$out/table.md" 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/gpu.txt" 2>&1
