#!/usr/bin/env bash
# Ten (RUNS) `kforge eval --cross-check --refresh-baselines --json` of each shipped CUDA example in
# fresh processes, one after another, as a user would run them: the repeatability of the figures
# `kforge eval` itself reports (issue 16, item 3), not the timing routine's alone. The first run of
# each example builds it; the later ones load the build from the cache.
#
#   OUT=DIR RUNS=10 FLAGS='--warmup-ms 0' bash bench/gpu/eval_spread.sh EXAMPLE…
#
# EXAMPLE: a folder name under examples/ (level3_01_residual_mlp: problems/level3/01_residual_mlp.py
# against examples/level3_01_residual_mlp/cuda_fast.py). DEADLINE_S (default: none): no run starts
# after it. Each run writes DIR/EXAMPLE/eval-N.json (stdout) and eval-N.stderr; DIR/runs.log says
# when each ran and its exit status. `python3 bench/gpu/eval_spread.py DIR` makes the table.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:?set OUT to the results folder}"
runs="${RUNS:-10}"
deadline=$(( SECONDS + ${DEADLINE_S:-1000000} ))
read -r -a flags <<< "${FLAGS:-}"
mkdir -p "$out"
for example in "$@"; do
  level="${example%%_*}"
  problem="problems/${level}/${example#*_}.py"
  candidate="examples/${example}/cuda_fast.py"
  [ -f "$problem" ] && [ -f "$candidate" ] || { echo "$example: no $problem or $candidate" >> "$out/runs.log"; continue; }
  mkdir -p "$out/$example"
  for run in $(seq 1 "$runs"); do
    [ "$SECONDS" -lt "$deadline" ] || { echo "$(date -u +%H:%M:%S) deadline: $example run $run not started" >> "$out/runs.log"; break; }
    started=$SECONDS
    kforge eval "$problem" "$candidate" --backend cuda --cross-check --refresh-baselines --json "${flags[@]}" \
      > "$out/$example/eval-$run.json" 2> "$out/$example/eval-$run.stderr"
    echo "$(date -u +%H:%M:%S) $example run $run rc=$? in $((SECONDS - started))s" >> "$out/runs.log"
  done
done
