#!/usr/bin/env bash
# Issue 2's GPU measurements (docs/benchmarks/eval-h200.md), in as few device calls as possible.
#
#   here:    bash scripts/bundle-gpu.sh
#   device:  bash bench/gpu/eval-h200.sh [PHASE]     (carry .gpu; PHASE: all | verdicts | timed | repeat | cross)
#
# Phase `verdicts` evaluates every CUDA/Triton example once with --no-timing, 8 processes at a time,
# so that the builds run in parallel on the host's cores and land in the build cache (the GPU stages
# of those processes take turns: a host-wide lock per GPU); phase `timed` re-evaluates each one that
# was correct in full (5 trials, 100 timed calls, baselines), one at a time, its build a cache hit; `repeat` evaluates one candidate in 5 separate processes;
# `cross` times that candidate by CUDA events without flush, by triton's do_bench, and under ncu.
# Results go to $OUT (results-<phase>.jsonl, one evaluation JSON per line) and summary-<phase>.md.
set -uo pipefail
cd "$(dirname "$0")/../.."
phase="${1:-all}"
out="${OUT:-/tmp/kforge-gpu-out}"
mkdir -p "$out"
. scripts/gpu-node.sh
export KFORGE_CACHE_DIR="${KFORGE_CACHE_DIR:-/tmp/kforge-cache}"

problem_of() {  # examples/level1_05_softmax/cuda_fast.py -> problems/level1/05_softmax.py
  local folder; folder="$(basename "$(dirname "$1")")"
  echo "problems/${folder%%_*}/${folder#*_}.py"
}
backend_of() { case "$1" in *triton_*) echo triton ;; *) echo cuda ;; esac; }
candidates() { ls examples/*/cuda_*.py examples/*/triton_*.py 2>/dev/null; }

evaluate() {  # evaluate CANDIDATE TAG [FLAGS…]: one JSON line with the tag, wall seconds and the result
  local candidate="$1" tag="$2"; shift 2
  local started ended json
  json="$(mktemp)"
  started=$(date +%s.%N)
  kforge eval "$(problem_of "$candidate")" "$candidate" --backend "$(backend_of "$candidate")" --json "$@" >"$json" 2>>"$out/stderr-$tag.log"
  ended=$(date +%s.%N)
  python3 - "$candidate" "$tag" "$started" "$ended" "$json" <<'PY'
import json, sys
candidate, tag, started, ended, path = sys.argv[1:6]
text = open(path).read()
try:
    result = json.loads(text)
except ValueError:
    result = {"verdict": None, "error": text[-2000:]}
print(json.dumps({"candidate": candidate, "tag": tag, "wall_s": float(ended) - float(started), "result": result}))
PY
  rm -f "$json"
}
export -f evaluate problem_of backend_of
export out

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv; date -u; } > "$out/environment.txt" 2>&1
case "$phase" in all|verdicts)
  candidates | xargs -P 8 -I{} bash -c 'evaluate "$1" verdicts --no-timing' _ {} > "$out/results-verdicts.jsonl" ;;
esac
timed_candidates() {  # the candidates phase `verdicts` found correct (every one when it has not run)
  if [ -s "$out/results-verdicts.jsonl" ]; then
    python3 -c 'import json, sys; [print(r["candidate"]) for r in map(json.loads, open(sys.argv[1])) if (r["result"] or {}).get("verdict") == "correct"]' "$out/results-verdicts.jsonl" | sort
  else
    candidates
  fi
}
case "$phase" in all|timed)
  for candidate in $(timed_candidates); do evaluate "$candidate" timed; done > "$out/results-timed.jsonl" ;;
esac
repeat_candidate="${KFORGE_REPEAT_CANDIDATE:-examples/level1_07_layer_norm/cuda_fast.py}"
case "$phase" in all|repeat)
  for run in 1 2 3 4 5; do evaluate "$repeat_candidate" "repeat-$run"; done > "$out/results-repeat.jsonl" ;;
esac
case "$phase" in all|cross)
  {
    python3 bench/gpu/cross_check_timing.py "$(problem_of "$repeat_candidate")" "$repeat_candidate"
    ncu --clock-control none --metrics gpu__time_duration.sum --csv \
      python3 bench/gpu/cross_check_timing.py "$(problem_of "$repeat_candidate")" "$repeat_candidate" --ncu 2>&1 | tail -40
  } > "$out/cross-check.txt" 2>&1 ;;
esac
for file in "$out"/results-*.jsonl; do
  [ -s "$file" ] && python3 bench/gpu/summarize.py "$file" > "${file%.jsonl}.md"
done
cat "$out"/results-*.md 2>/dev/null || true  # the cross phase alone writes no result file
