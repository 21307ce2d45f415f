#!/usr/bin/env bash
# The output hand-over on a GPU (docs/benchmarks/handover-gpu.md): how outputs reach the judge
# through the sandbox, and what a 6 GiB KernelBench evaluation holds the device for.
#
#   here:    bash scripts/bundle-gpu.sh; copy KernelBench's level1/19_ReLU.py to .gpu-corpus/kb/
#   device:  OUT=/tmp/handover bash bench/handover/gpu.sh      (carry .gpu and .gpu-corpus)
#
# 1. `small`: level1_01's shipped problem and examples/level1_01_relu/cuda_fast.py, sandbox on:
#    the verdict and the guard report's `handover` entry (cuda-ipc expected).
# 2. `relu6g`: KernelBench's 19_ReLU at its own sizes (4096 x 393216 float32: 6 GiB inputs and
#    outputs) with the same kernel: verdict, stage durations, the `handover` entry, wall time.
# Each writes <name>.json and <name>.stderr under $OUT; summary.txt has one line each.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/kforge-handover}"
mkdir -p "$out"
. scripts/gpu-node.sh
export KFORGE_CACHE_DIR="${KFORGE_CACHE_DIR:-/tmp/kforge-cache}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.csv" 2>&1
run() {  # run NAME PROBLEM CANDIDATE [FLAGS...]
  local name="$1" problem="$2" candidate="$3"
  shift 3
  local started
  started=$(date +%s.%N)
  kforge eval "$problem" "$candidate" --backend cuda --json "$@" >"$out/$name.json" 2>"$out/$name.stderr"
  local status=$?
  python3 - "$out/$name.json" "$name" "$status" "$(python3 -c "print(round($(date +%s.%N) - $started, 1))")" >>"$out/summary.txt" <<'PY'
import json, sys
path, name, status, wall = sys.argv[1:5]
try:
    result = json.load(open(path))
except (OSError, ValueError) as error:
    print(f"{name}: exit {status}, wall {wall} s, no result ({error})")
    raise SystemExit
checks = (result.get("guard") or {}).get("checks") or []
handover = next((check["message"] for check in checks if check.get("check") == "handover"), None)
stages = (result.get("diagnostics") or {}).get("stages") or result.get("stages") or {}
median = ((result.get("timing") or {}).get("candidate_ms") or {}).get("median")
print(f"{name}: exit {status}, wall {wall} s, verdict {result.get('verdict')} {result.get('reasons')}, "
      f"median {median} ms, stages {json.dumps(stages)}, handover: {handover}")
PY
}
run small problems/level1/01_relu.py examples/level1_01_relu/cuda_fast.py
run relu6g .gpu-corpus/kb/19_ReLU.py examples/level1_01_relu/cuda_fast.py --perf-trials 20
cat "$out/summary.txt"
