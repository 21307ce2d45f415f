#!/usr/bin/env bash
# Where a GPU-sized evaluation's worker time goes, and what the workers' bytecode cache changes:
# `kforge eval` of the shipped Triton ReLU (no nvcc) at GPU size with KFORGE_WORKER_PROFILE set, so
# that every worker role writes a sampling profile (worker/kforge_worker/protocol/sampling_profile.py), with
# the workers' bytecode cache on (primed first where torch has no bytecode of its own; PROFILE_OFF=1
# also runs it with the cache off); then `import torch` timed with and without the cache.
#
#   OUT=DIR bash bench/gpu/profile-worker.sh        (on the GPU machine, after scripts/bundle-gpu.sh)
#
# PROFILE_SETS: `--set` flags for the problem's constants, e.g. "batch_size=4096 dim=393216" (KernelBench's
# 19_ReLU: 6 GiB inputs and outputs), to see where an evaluation at KernelBench's sizes spends its time.
# PROFILE_MEMORY=1: the workers also record the CUDA allocator's history, a snapshot per stage
# (KFORGE_WORKER_PROFILE_MEMORY; docs/worker-protocol.md), to name what holds each stage's peak.
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/gpu-node.sh
out="${OUT:-/tmp/kforge-profile}"
mkdir -p "$out"
export KFORGE_CACHE_DIR="${KFORGE_CACHE_DIR:-/tmp/kforge-cache}" PYTHONUNBUFFERED=1
python3 - > "$out/bytecode-state.txt" 2>&1 <<'PY'
import importlib.util, os
source = importlib.util.find_spec("torch").origin
cached = importlib.util.cache_from_source(source)
print("torch source:", source)
print("bytecode beside it:", cached, "exists" if os.path.exists(cached) else "MISSING")
PY
sets=()
for assignment in ${PROFILE_SETS:-}; do sets+=(--set "$assignment"); done
profile() {  # profile NAME BYTECODE_CACHE
  local name="$1" cache="$2" started=$SECONDS
  KFORGE_BYTECODE_CACHE="$cache" KFORGE_WORKER_PROFILE="$out/$name" KFORGE_WORKER_PROFILE_MEMORY="${PROFILE_MEMORY:-0}" kforge eval problems/level1/01_relu.py \
    examples/level1_01_relu/triton_fast.py --backend triton --preset gpu "${sets[@]}" --json > "$out/$name.json" 2> "$out/$name.stderr"
  echo "$name: rc=$? in $((SECONDS - started)) s" >> "$out/runs.txt"
}
[ "${PROFILE_OFF:-0}" = 1 ] && profile relu-triton-bytecode-off 0
profile relu-triton-bytecode-on 1
import_torch() {
  python3 -B -c 'import time; t = time.perf_counter(); import torch; print(f"{time.perf_counter() - t:.2f} s")'
}
{
  echo "import torch, bytecode cache off: $(import_torch)"
  echo "import torch, bytecode cache on:  $(PYTHONPYCACHEPREFIX="$KFORGE_CACHE_DIR/pycache" import_torch)"
} >> "$out/runs.txt"
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    try:
        verdict = json.load(open(path))
    except ValueError:
        print(path, "unreadable"); continue
    stages = {name: round(ms / 1000, 2) for name, ms in (verdict.get("stages") or {}).items()}
    print(os.path.basename(path), verdict.get("verdict"), json.dumps(stages))
PY
