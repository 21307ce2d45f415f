#!/usr/bin/env bash
# Why eager re-timed beside the candidate read twice its cached figure for three KernelBench
# convolution problems on the H100 (docs/benchmarks/kernelbench-sizes-h200.md, tenth lease).
#
#   OUT=DIR bash bench/gpu/anchor_probe.sh KERNELBENCH_DIR LEADERBOARD_DIR
#
# Seven published pairs of the sizes batch (the leaderboard's kernels) as one batch folder: level 2's
# 2_ConvTranspose2d_BiasAdd_Clamp_Scaling_Clamp_Divide and 7_Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd
# (two of the three whose re-timing doubled; the third, 35_Conv2d_Subtract_HardSwish_MaxPool_Mish,
# is not in the list) and level 1's 95_CrossEntropyLoss (no convolution), and four whose re-timing agreed
# (two more convolutions, a transposed 3-D one, MinGPTNewGelu), so that the batch's warm workers
# come and go around each re-timing as they did in the sizes batch:
#   1. `kforge eval DIR --refresh-baselines`: the baselines measured afresh (by the batch's
#      prefetch, as in the sizes record), eager re-timed beside each candidate;
#   2. and 3. the same command without the flag: the cached baselines against two more re-timings.
# Each run's verdicts keep the first figure and the re-timing (`timing.baseline_anchor`). Then
# bench/gpu/anchor_probe.py times eager for the first three problems (two convolutions, one without), each in one plain process before and after
# what the reference role does between its baselines and its re-timing (the float64 outputs, a
# judge-sized allocation and release), with torch's flags printed, and again with the device
# filled but for 1 GiB during its first forwards (whether a cuDNN algorithm chosen on a full device
# stays for the process: the suspected cause, docs/benchmarks/timing-h200.md, last section).
set -uo pipefail
kernelbench="$1"
leaderboard="$2"
out="${OUT:?set OUT}"
mkdir -p "$out/pairs"
pair() {  # pair LEVEL NAME LEADERBOARD_HASH_PREFIX
  local problem candidate
  problem="$(realpath "$kernelbench"/KernelBench/level"$1"/"$2".py)"
  candidate="$(realpath "$(ls "$leaderboard"/docs/assets/solutions/"$3"*.py | head -1)")"
  echo "$problem:$candidate"
}
{
  pair 2 2_ConvTranspose2d_BiasAdd_Clamp_Scaling_Clamp_Divide 26f0183b
  pair 2 7_Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd d0d792da
  pair 1 95_CrossEntropyLoss ee6802ec
  pair 2 69_Conv2d_HardSwish_ReLU 48aaf53d
  pair 2 26_ConvTranspose3d_Add_HardSwish b91851ff
  pair 2 50_ConvTranspose3d_Scaling_AvgPool_BiasAdd_Scaling 3130954b
  pair 1 88_MinGPTNewGelu 870d29e1
} >"$out/pairs/pairs.txt"
cat "$out/pairs/pairs.txt"
# PROBE_ONLY=1: only the plain processes of anchor_probe.py below (a few minutes, not the three batches).
runs="1 2 3"
[ "${PROBE_ONLY:-0}" = 1 ] && runs=""
for run in $runs; do
  flags=()
  [ "$run" = 1 ] && flags=(--refresh-baselines)
  kforge eval "$out/pairs" --backend cuda --json --perf-trials 20 --warmup 5 "${flags[@]}" \
    >"$out/run-$run.jsonl" 2>"$out/run-$run.stderr"
  echo "run $run: exit $?"
done
[ -n "$runs" ] && python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
for run in (1, 2, 3):
    for line in open(f"{out}/run-{run}.jsonl"):
        result = json.loads(line)
        timing = result.get("timing") or {}
        anchor = timing.get("baseline_anchor") or {}
        name = result["problem"].rsplit("/", 1)[-1]
        eager = (timing.get("eager_ms") or {}).get("median")
        print(f"run {run} {name}: {result['verdict']} cached={timing.get('baseline_cached')} eager={eager} "
              f"re-timed={(anchor.get('eager_ms') or {}).get('median')} used={anchor.get('used')} "
              f"candidate={(timing.get('candidate_ms') or {}).get('median')}")
PY
head -n 3 "$out/pairs/pairs.txt" | while IFS=: read -r problem _; do
  python3 bench/gpu/anchor_probe.py "$problem"
  python3 bench/gpu/anchor_probe.py "$problem" --free-gib 1
done
